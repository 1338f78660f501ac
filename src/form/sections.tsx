/**
 * The form's sections: a collapsible frame, and each section's fields in the
 * field table's order, each as its codec edits it unless it has a control of
 * its own.
 *
 * @packageDocumentation
 */

import * as React from 'react';

import { describeNodes } from '../format';
import { translateCoded } from '../servermessages';
import { IFieldInfo, IRuntime, IVolume } from '../tokens';
import {
  CodeField,
  Field,
  IFormContext,
  NumberField,
  RadioField,
  SelectField,
  TextField
} from './fields';
import { KeyValueEditor, PvcEditor, TolerationEditor } from './rows';
import {
  errorsUnder,
  extrasPaths,
  FormSection,
  stateText,
  TRAINJOB,
  usesDataLoaderWorkers
} from './state';

// The runtime a TrainJob without one runs on (the server's default).
const DEFAULT_RUNTIME = 'torch-distributed';

/**
 * A collapsible section of the form; it says when its fields have errors.
 */
export function Section(props: {
  form: IFormContext;
  id: FormSection;
  open: boolean;
  hasErrors: boolean;
  onToggle: () => void;
  children: React.ReactNode;
}): JSX.Element {
  const { form, id, open } = props;
  const buttonId = `${form.idPrefix}-${id}`;
  return (
    <section
      className="jp-PyTorchJobForm-section"
      data-section={id}
      aria-labelledby={buttonId}
    >
      <h3 className="jp-PyTorchJobForm-sectionTitle">
        <button
          type="button"
          id={buttonId}
          aria-expanded={open}
          onClick={props.onToggle}
        >
          <span className="jp-PyTorchJobForm-caret" aria-hidden="true">
            {open ? '▾' : '▸'}
          </span>
          {form.texts.sections[id]}
          {props.hasErrors && (
            <span className="jp-PyTorchJobForm-sectionError">
              {form.trans.__('has errors')}
            </span>
          )}
        </button>
      </h3>
      {open && <div className="jp-PyTorchJobForm-fields">{props.children}</div>}
    </section>
  );
}

/**
 * The fields of a section, in the field table's order (`GET config`'s
 * `fields`): each as its codec edits it, or through the control of its own
 * that `BESPOKE` names (a group may take the place of its first field).
 */
export function SectionFields(props: {
  form: IFormContext;
  section: FormSection;
  volumes: readonly IVolume[];
}): JSX.Element {
  const { form, section, volumes } = props;
  return (
    <>
      {Object.entries(form.fields)
        .filter(([, info]) => info.section === section)
        .map(([name, info]) => (
          <React.Fragment key={name}>
            {name in BESPOKE
              ? BESPOKE[name](form, volumes)
              : tableField(form, name, info)}
          </React.Fragment>
        ))}
    </>
  );
}

/**
 * A field as its codec edits it.
 */
function tableField(
  form: IFormContext,
  name: string,
  info: IFieldInfo
): JSX.Element | null {
  switch (info.form) {
    case 'map':
      return <KeyValueEditor form={form} name={name} />;
    case 'choice':
      return (
        <SelectField
          form={form}
          name={name}
          choices={[...(info.nullable ? [''] : []), ...(info.choices ?? [])]}
        />
      );
    case 'number':
      return info.nullable ? (
        <TextField form={form} name={name} />
      ) : (
        <NumberField form={form} name={name} min={0} />
      );
    case 'text':
    case 'quantity':
    case 'list':
      return <TextField form={form} name={name} />;
    default:
      return null; // rows and custom fields have a control of their own
  }
}

/**
 * The fields with a control of their own; `null`: shown by another's.
 */
const BESPOKE: Record<
  string,
  (form: IFormContext, volumes: readonly IVolume[]) => JSX.Element | null
> = {
  image: () => null, // after the kind and the runtime that decide its default
  kind: form => <KindFields form={form} />,
  runtime: () => null,
  dataset: form => initializerField(form, 'dataset', 'dataset-initializer'),
  model: form => initializerField(form, 'model', 'model-initializer'),
  datasetSecret: form =>
    initializerField(form, 'datasetSecret', 'dataset-initializer'),
  modelSecret: form =>
    initializerField(form, 'modelSecret', 'model-initializer'),
  command: form => <EntryFields form={form} />,
  args: form => <TextField form={form} name="args" />,
  script: () => null,
  nodes: form => (
    <NumberField
      form={form}
      name="nodes"
      min={1}
      hint={
        <span className="jp-PyTorchJobForm-nodes">
          {describeNodes(
            Number(form.state.nodes),
            form.trans,
            form.state.kind || undefined
          )}
        </span>
      }
    />
  ),
  master: () => null, // kept from a clone, not edited
  nprocPerNode: form => (
    <RuntimeDecidedField
      form={form}
      name="nprocPerNode"
      decided={form.trans.__('the runtime’s: GPUs, else CPUs')}
    />
  ),
  shm: (form, volumes) => (
    <>
      <PvcEditor form={form} volumes={volumes} />
      <ShmField form={form} />
    </>
  ),
  pvc: () => null, // with /dev/shm, before it
  logArchive: form => (
    <TextField form={form} name="logArchive" hint={archiveHint(form)} />
  ),
  tolerations: form => <TolerationEditor form={form} />,
  extras: form => <ExtrasField form={form} />
};

/**
 * A TrainJob's dataset or model (or its Secret): shown only when the chosen
 * runtime has the initializer that fetches it (`GET runtimes`), or when set
 * (a clone). With no runtimes listed (the local backend), the URIs show, for
 * file:// copies only, and the Secrets, which need a cluster, do not.
 */
function initializerField(
  form: IFormContext,
  name: 'dataset' | 'model' | 'datasetSecret' | 'modelSecret',
  initializer: string
): JSX.Element | null {
  const set = stateText(form.state, name).trim() !== '';
  const secret = name.endsWith('Secret');
  if (form.runtimes.length === 0 && !form.runtimesError) {
    if (secret && !set) {
      return null;
    }
    return (
      <TextField
        form={form}
        name={name}
        hint={
          secret ? undefined : form.trans.__('file:// only on this backend')
        }
      />
    );
  }
  const chosen = form.runtimes.find(
    r => r.name === (form.state.runtime || DEFAULT_RUNTIME)
  );
  const fetches = !chosen || chosen.initializers.includes(initializer);
  return fetches || set ? <TextField form={form} name={name} /> : null;
}

/**
 * A field a TrainJob's runtime decides when it is left empty: the placeholder
 * says so (`decided`), not our default.
 */
function RuntimeDecidedField(props: {
  form: IFormContext;
  name: 'image' | 'nprocPerNode';
  decided: string;
}): JSX.Element {
  const { form, name, decided } = props;
  return (
    <TextField
      form={form}
      name={name}
      placeholder={form.state.kind === TRAINJOB ? decided : undefined}
    />
  );
}

/**
 * The kind (a switch when the backend runs several), a TrainJob's runtime,
 * and the image whose default they decide.
 */
function KindFields(props: { form: IFormContext }): JSX.Element {
  const { form } = props;
  return (
    <>
      {form.kinds.length > 1 && (
        <SelectField
          form={form}
          name="kind"
          choices={form.kinds.map(k => k.kind)}
        />
      )}
      <RuntimeField form={form} />
      <RuntimeDecidedField
        form={form}
        name="image"
        decided={form.trans.__('the runtime’s image')}
      />
    </>
  );
}

/**
 * What the job runs: a command line, or a script shipped with it.
 */
function EntryFields(props: { form: IFormContext }): JSX.Element {
  const { form } = props;
  return (
    <>
      <RadioField form={form} name="mode" />
      {form.state.mode === 'command' ? (
        <TextField form={form} name="command" />
      ) : (
        <CodeField form={form} name="script" rows={10} />
      )}
    </>
  );
}

/**
 * A TrainJob's runtime, picked among those of the cluster (`GET runtimes`):
 * each with its framework, whether it is deprecated and why this tool cannot
 * use it; picking one takes its image and node count.
 */
function RuntimeField(props: { form: IFormContext }): JSX.Element | null {
  const { form } = props;
  const { trans, state } = form;
  if (!form.supported?.has('runtime')) {
    return null;
  }
  const runtimes = [...form.runtimes];
  if (state.runtime && !runtimes.some(r => r.name === state.runtime)) {
    runtimes.push(Private.unknownRuntime(state.runtime));
  }
  const chosen = form.runtimes.find(r => r.name === state.runtime);
  const hint = form.runtimesError
    ? trans.__('Could not list the runtimes: %1', form.runtimesError)
    : chosen
      ? Private.describeRuntime(chosen, trans)
      : form.texts.fields.runtime.hint;
  return (
    <Field
      form={form}
      name="runtime"
      hint={hint}
      control={(id, describedBy) => (
        <select
          id={id}
          className="jp-mod-styled"
          value={state.runtime}
          aria-describedby={describedBy}
          onChange={e => form.pickRuntime(e.currentTarget.value)}
        >
          <option value="">{form.texts.fields.runtime.choices?.['']}</option>
          {runtimes.map(r => (
            <option
              key={r.name}
              value={r.name}
              disabled={r.unusable !== null && r.name !== state.runtime}
            >
              {Private.runtimeLabel(r, trans)}
            </option>
          ))}
        </select>
      )}
    />
  );
}

/**
 * Why the log archive is off, when it is (no PVC, or no directory to put it in).
 */
function archiveHint(form: IFormContext): string | undefined {
  const { state, trans } = form;
  if (state.logArchive.trim() === 'off') {
    return trans.__('Off: logs go with the pods.');
  }
  if (!state.pvc.some(row => row.claim.trim())) {
    return trans.__(
      'Off: the job mounts no PVC, so its logs go with its pods. Add a PVC to keep them.'
    );
  }
  if (!state.logArchive.trim() && !state.logdir.trim()) {
    return trans.__(
      'Off: no log directory. Give a directory on a PVC to keep the logs after the pods are gone.'
    );
  }
  return undefined;
}

/**
 * `/dev/shm`: on or off, and its size; off warns when DataLoader workers
 * need it.
 */
function ShmField(props: { form: IFormContext }): JSX.Element {
  const { form } = props;
  const { state } = form;
  const text = form.texts.fields.shm;
  const hint = state.shmEnabled ? (
    text.hint
  ) : (
    <span
      className={
        usesDataLoaderWorkers(state) ? 'jp-PyTorchJobForm-warning' : ''
      }
    >
      {text.hintOff}
    </span>
  );
  return (
    <Field
      form={form}
      name="shm"
      hint={hint}
      control={(id, describedBy) => (
        <span className="jp-PyTorchJobForm-shm">
          <label className="jp-PyTorchJobForm-inline">
            <input
              type="checkbox"
              checked={state.shmEnabled}
              aria-label={text.ariaLabel}
              onChange={e => form.set({ shmEnabled: e.currentTarget.checked })}
            />
            {form.trans.__('On')}
          </label>
          <input
            id={id}
            className="jp-mod-styled"
            type="text"
            value={state.shm}
            disabled={!state.shmEnabled}
            aria-describedby={describedBy}
            onChange={e => form.set({ shm: e.currentTarget.value })}
          />
        </span>
      )}
    />
  );
}

/**
 * The manifest fields the form does not know, kept from the YAML.
 */
function ExtrasField(props: { form: IFormContext }): JSX.Element | null {
  const { form } = props;
  const keys = Object.keys(form.state.extras);
  if (keys.length === 0) {
    return null;
  }
  return (
    <div className="jp-PyTorchJobForm-field" data-field="extras">
      <span className="jp-PyTorchJobForm-label">
        {form.texts.fields.extras.label}
      </span>
      <div className="jp-PyTorchJobForm-hint">
        {form.trans.__(
          'Kept from the YAML: %1',
          extrasPaths(form.state.extras).join(', ')
        )}
      </div>
      {errorsUnder(form.errors, 'extras').map((m, i) => (
        <div className="jp-PyTorchJobForm-error" key={i}>
          {m}
        </div>
      ))}
    </div>
  );
}

/**
 * Module-private helpers.
 */
namespace Private {
  /**
   * A runtime's line in the picker: name, framework, deprecated, why unusable.
   */
  export function runtimeLabel(
    runtime: IRuntime,
    trans: IFormContext['trans']
  ): string {
    let label = runtime.framework
      ? `${runtime.name} (${runtime.framework})`
      : runtime.name;
    if (runtime.deprecated) {
      label += ' · ' + trans.__('deprecated');
    }
    if (runtime.unusable) {
      label += ' · ' + trans.__('unusable: %1', unusableText(runtime, trans));
    }
    return label;
  }

  /**
   * Why this tool cannot submit to a runtime, in the user's language.
   */
  function unusableText(
    runtime: IRuntime,
    trans: IFormContext['trans']
  ): string {
    const { unusable, unusableCode, unusableParams } = runtime;
    return translateCoded(unusable, unusableCode, unusableParams, trans);
  }

  /**
   * What the chosen runtime gives a job.
   */
  export function describeRuntime(
    runtime: IRuntime,
    trans: IFormContext['trans']
  ): string {
    const parts = [
      runtime.kind,
      trans._n('%1 node', '%1 nodes', runtime.nodes),
      runtime.image ?? trans.__('no image')
    ];
    if (runtime.deprecated) {
      parts.push(trans.__('deprecated'));
    }
    if (runtime.unusable) {
      parts.push(trans.__('unusable: %1', unusableText(runtime, trans)));
    }
    return parts.join(' · ');
  }

  /**
   * A runtime the job names but the cluster does not list (a clone).
   */
  export function unknownRuntime(name: string): IRuntime {
    return {
      name,
      kind: '',
      framework: null,
      deprecated: false,
      nodes: 1,
      image: null,
      policy: null,
      replicatedJobs: [],
      initializers: [],
      unusable: null
    };
  }
}
