/**
 * The form's sections: a collapsible frame, and the fields of Basics,
 * Resources, Storage and Advanced.
 *
 * @packageDocumentation
 */

import * as React from 'react';

import { describeNodes } from '../format';
import { IVolume } from '../tokens';
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
 * Basics: name, image, what the job runs, where.
 */
function BasicsFields(props: { form: IFormContext }): JSX.Element {
  const { form } = props;
  return (
    <>
      <TextField form={form} name="name" />
      <TextField form={form} name="image" />
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
      <TextField form={form} name="nprocPerNode" />
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
