/**
 * The form's sections: a collapsible frame, and the fields of Basics,
 * Resources, Storage and Advanced.
 *
 * @packageDocumentation
 */

import * as React from 'react';

import { describeNodes } from '../format';
import { IRuntime, IVolume } from '../tokens';
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
  choicesOf,
  errorsUnder,
  FormSection,
  TRAINJOB,
  usesDataLoaderWorkers
} from './state';

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
 * The fields of each section.
 */
export const SECTION_FIELDS: Record<
  FormSection,
  (props: { form: IFormContext; volumes: readonly IVolume[] }) => JSX.Element
> = {
  basics: BasicsFields,
  resources: ResourcesFields,
  storage: StorageFields,
  elastic: ElasticFields,
  advanced: AdvancedFields
};

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
 * Basics: name, image, what the job runs, where.
 */
function BasicsFields(props: { form: IFormContext }): JSX.Element {
  const { form } = props;
  return (
    <>
      <TextField form={form} name="name" />
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
      <RadioField form={form} name="mode" />
      {form.state.mode === 'command' ? (
        <TextField form={form} name="command" />
      ) : (
        <CodeField form={form} name="script" rows={10} />
      )}
      <TextField form={form} name="args" />
      <TextField form={form} name="workdir" />
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
 * Resources: nodes, GPUs, CPU, memory, processes.
 */
function ResourcesFields(props: { form: IFormContext }): JSX.Element {
  const { form } = props;
  return (
    <>
      <NumberField
        form={form}
        name="nodes"
        min={1}
        hint={
          <span className="jp-PyTorchJobForm-nodes">
            {describeNodes(Number(form.state.nodes), form.trans)}
          </span>
        }
      />
      <NumberField form={form} name="gpus" min={0} />
      <TextField form={form} name="gpuResource" />
      <TextField form={form} name="cpu" />
      <TextField form={form} name="memory" />
      <RuntimeDecidedField
        form={form}
        name="nprocPerNode"
        decided={form.trans.__('the runtime’s: GPUs, else CPUs')}
      />
    </>
  );
}

/**
 * Storage: PVCs, `/dev/shm`, the TensorBoard log directory.
 */
function StorageFields(props: {
  form: IFormContext;
  volumes: readonly IVolume[];
}): JSX.Element {
  const { form } = props;
  return (
    <>
      <PvcEditor form={form} volumes={props.volumes} />
      <ShmField form={form} />
      <TextField form={form} name="logdir" />
      <TextField form={form} name="logArchive" hint={archiveHint(form)} />
    </>
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
 * Elastic: the bounds and restarts of an elastic (torchrun rendezvous) job.
 */
function ElasticFields(props: { form: IFormContext }): JSX.Element {
  const { form } = props;
  return (
    <>
      <TextField form={form} name="minNodes" />
      <TextField form={form} name="maxNodes" />
      <TextField form={form} name="maxRestarts" />
      <SelectField
        form={form}
        name="rdzvBackend"
        choices={['', ...choicesOf(form.fields, 'rdzvBackend')]}
      />
    </>
  );
}

/**
 * Advanced: environment, restarts, deadlines, scheduling, metadata.
 */
function AdvancedFields(props: { form: IFormContext }): JSX.Element {
  const { form } = props;
  return (
    <>
      <KeyValueEditor form={form} name="env" />
      <SelectField
        form={form}
        name="restartPolicy"
        choices={choicesOf(form.fields, 'restartPolicy')}
      />
      <TextField form={form} name="backoffLimit" />
      <TextField form={form} name="deadline" />
      <TextField form={form} name="ttl" />
      <SelectField
        form={form}
        name="cleanPodPolicy"
        choices={choicesOf(form.fields, 'cleanPodPolicy')}
      />
      <KeyValueEditor form={form} name="nodeSelector" />
      <TolerationEditor form={form} />
      <KeyValueEditor form={form} name="labels" />
      <KeyValueEditor form={form} name="annotations" />
      <TextField form={form} name="queue" />
      <TextField form={form} name="priorityClassName" />
      <ExtrasField form={form} />
    </>
  );
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
        {form.trans.__('Kept from the YAML: %1', keys.join(', '))}
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
      label += ' · ' + trans.__('unusable: %1', runtime.unusable);
    }
    return label;
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
      parts.push(trans.__('unusable: %1', runtime.unusable));
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
