/**
 * The job form: Basics / Resources / Storage / Advanced, live validation,
 * the editable YAML preview, and submission.
 *
 * @packageDocumentation
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { addIcon, closeIcon, ReactWidget } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import * as React from 'react';

import { describeNodes } from '../format';
import { IJob, IVolume } from '../tokens';
import { JobFormModel } from './model';
import {
  CLEAN_POD_POLICIES,
  errorsUnder,
  FormSection,
  IFormState,
  IKeyValue,
  IPvcRow,
  ITolerationRow,
  RESTART_POLICIES,
  TOLERATION_EFFECTS,
  usesDataLoaderWorkers
} from './state';

/**
 * The job form widget (main area).
 */
export class JobForm extends ReactWidget {
  /**
   * Construct a form around a model.
   */
  constructor(options: JobForm.IOptions) {
    super();
    this.model = options.model;
    this._trans = options.trans;
    this._onSubmitted = options.onSubmitted;
    this.addClass('jp-PyTorchJobForm');
    this.model.changed.connect(() => this.update(), this);
    void this.model.loadVolumes();
    void this.model.validate();
  }

  /**
   * The form's model.
   */
  readonly model: JobFormModel;

  /**
   * Whether the YAML preview is shown.
   */
  get preview(): boolean {
    return this._preview;
  }
  set preview(value: boolean) {
    this._preview = value;
    this.update();
  }

  /**
   * Submit the job, then hand it over.
   */
  async submit(): Promise<void> {
    const job = await this.model.submit();
    if (job) {
      this._onSubmitted(job);
    } else {
      const sections = this.model.sectionsWithErrors;
      for (const section of sections) {
        this._open.add(section);
      }
      this.update();
    }
  }

  dispose(): void {
    this.model.dispose();
    super.dispose();
  }

  protected onActivateRequest(msg: Message): void {
    super.onActivateRequest(msg);
    // Focus the first field, unless the user is already in the form (a
    // click inside it activates the tab too, and must not move the focus).
    if (!this.node.contains(document.activeElement)) {
      this.node.querySelector<HTMLInputElement>('input')?.focus();
    }
  }

  protected render(): JSX.Element {
    const model = this.model;
    const trans = this._trans;
    const state = model.state;
    const set = (patch: Partial<IFormState>) => model.set(patch);
    const errors = model.visibleErrors;
    const errorsWith = model.sectionsWithErrors;
    const section = (
      id: FormSection,
      title: string,
      children: React.ReactNode
    ) => {
      const open = this._open.has(id) || errorsWith.has(id);
      return (
        <section
          className="jp-PyTorchJobForm-section"
          data-section={id}
          aria-labelledby={`${this.id}-${id}`}
        >
          <h3 className="jp-PyTorchJobForm-sectionTitle">
            <button
              type="button"
              id={`${this.id}-${id}`}
              aria-expanded={open}
              onClick={() => {
                if (this._open.has(id)) {
                  this._open.delete(id);
                } else {
                  this._open.add(id);
                }
                this.update();
              }}
            >
              <span className="jp-PyTorchJobForm-caret" aria-hidden="true">
                {open ? '▾' : '▸'}
              </span>
              {title}
              {errorsWith.has(id) && (
                <span className="jp-PyTorchJobForm-sectionError">
                  {trans.__('has errors')}
                </span>
              )}
            </button>
          </h3>
          {open && <div className="jp-PyTorchJobForm-fields">{children}</div>}
        </section>
      );
    };
    const field = (
      name: string,
      label: string,
      control: (id: string, describedBy: string) => React.ReactNode,
      hint?: React.ReactNode
    ) => {
      const id = `${this.id}-f-${name}`;
      const messages = errorsUnder(errors, name);
      const describedBy = `${id}-hint ${id}-error`;
      return (
        <div
          className={
            'jp-PyTorchJobForm-field' +
            (messages.length ? ' jp-mod-invalid' : '')
          }
          data-field={name}
        >
          <label htmlFor={id}>{label}</label>
          {control(id, describedBy)}
          {hint && (
            <div className="jp-PyTorchJobForm-hint" id={`${id}-hint`}>
              {hint}
            </div>
          )}
          {messages.length > 0 && (
            <div
              className="jp-PyTorchJobForm-error"
              id={`${id}-error`}
              role="alert"
            >
              {messages.map((message, i) => (
                <div key={i}>{message}</div>
              ))}
            </div>
          )}
        </div>
      );
    };
    const text = (
      name: keyof IFormState,
      label: string,
      options: { placeholder?: string; hint?: React.ReactNode } = {}
    ) =>
      field(
        name,
        label,
        (id, describedBy) => (
          <input
            id={id}
            className="jp-mod-styled"
            type="text"
            spellCheck={false}
            value={state[name] as string}
            placeholder={options.placeholder}
            aria-invalid={errors.has(name)}
            aria-describedby={describedBy}
            onChange={e =>
              set({ [name]: e.currentTarget.value } as Partial<IFormState>)
            }
          />
        ),
        options.hint
      );
    const select = (
      name: keyof IFormState,
      label: string,
      choices: string[],
      hint?: React.ReactNode
    ) =>
      field(
        name,
        label,
        (id, describedBy) => (
          <select
            id={id}
            className="jp-mod-styled"
            value={state[name] as string}
            aria-describedby={describedBy}
            onChange={e =>
              set({ [name]: e.currentTarget.value } as Partial<IFormState>)
            }
          >
            {choices.map(choice => (
              <option key={choice} value={choice}>
                {choice}
              </option>
            ))}
          </select>
        ),
        hint
      );
    const nodes = Number(state.nodes);
    const shmHint = !state.shmEnabled ? (
      <span
        className={
          usesDataLoaderWorkers(state) ? 'jp-PyTorchJobForm-warning' : ''
        }
      >
        {trans.__(
          'Without a memory-backed /dev/shm, the container runtime gives 64 MiB: PyTorch DataLoader workers (num_workers > 0) then fail with “bus error” or “insufficient shared memory”.'
        )}
      </span>
    ) : (
      trans.__(
        'A memory-backed emptyDir at /dev/shm in every replica; DataLoader workers share batches through it. It counts against the memory limit.'
      )
    );

    return (
      <div
        className={
          'jp-PyTorchJobForm-layout' + (this._preview ? ' jp-mod-preview' : '')
        }
      >
        <form
          className="jp-PyTorchJobForm-form"
          aria-label={trans.__('New PyTorch job')}
          onSubmit={e => {
            e.preventDefault();
            void this.submit();
          }}
        >
          <h2 className="jp-PyTorchJobForm-title">
            {trans.__('New PyTorch job')}
          </h2>
          {section(
            'basics',
            trans.__('Basics'),
            <>
              {text('name', trans.__('Name'), {
                hint: trans.__(
                  'Lower-case letters, digits and “-”, starting with a letter.'
                )
              })}
              {text('image', trans.__('Image'))}
              <div
                className="jp-PyTorchJobForm-field"
                role="radiogroup"
                aria-label={trans.__('What the job runs')}
              >
                <span className="jp-PyTorchJobForm-label">
                  {trans.__('Runs')}
                </span>
                <label className="jp-PyTorchJobForm-inline">
                  <input
                    type="radio"
                    name={`${this.id}-mode`}
                    checked={state.mode === 'command'}
                    onChange={() => set({ mode: 'command' })}
                  />
                  {trans.__('A command')}
                </label>
                <label className="jp-PyTorchJobForm-inline">
                  <input
                    type="radio"
                    name={`${this.id}-mode`}
                    checked={state.mode === 'script'}
                    onChange={() => set({ mode: 'script' })}
                  />
                  {trans.__('A script shipped with the job')}
                </label>
              </div>
              {state.mode === 'command'
                ? text('command', trans.__('Command'), {
                    placeholder: Private.EXAMPLE_COMMAND,
                    hint: trans.__(
                      'Split into words like a shell would (quotes work); no shell runs it.'
                    )
                  })
                : field(
                    'script',
                    trans.__('Script'),
                    (id, describedBy) => (
                      <textarea
                        id={id}
                        className="jp-PyTorchJobForm-code"
                        rows={10}
                        spellCheck={false}
                        value={state.script}
                        aria-describedby={describedBy}
                        onChange={e => set({ script: e.currentTarget.value })}
                      />
                    ),
                    trans.__(
                      'Python source, at most 120 KiB, run with python -u (or torchrun with several processes per node).'
                    )
                  )}
              {text('args', trans.__('Arguments'), {
                placeholder: Private.EXAMPLE_ARGS
              })}
              {text('workdir', trans.__('Working directory'), {
                placeholder: trans.__('the image’s'),
                hint: trans.__('An absolute path.')
              })}
            </>
          )}
          {section(
            'resources',
            trans.__('Resources'),
            <>
              {field(
                'nodes',
                trans.__('Nodes'),
                (id, describedBy) => (
                  <input
                    id={id}
                    className="jp-mod-styled"
                    type="number"
                    min={1}
                    value={state.nodes}
                    aria-describedby={describedBy}
                    onChange={e => set({ nodes: e.currentTarget.value })}
                  />
                ),
                <span className="jp-PyTorchJobForm-nodes">
                  {describeNodes(nodes, trans)}
                </span>
              )}
              {field('gpus', trans.__('GPUs per node'), (id, describedBy) => (
                <input
                  id={id}
                  className="jp-mod-styled"
                  type="number"
                  min={0}
                  value={state.gpus}
                  aria-describedby={describedBy}
                  onChange={e => set({ gpus: e.currentTarget.value })}
                />
              ))}
              {text('gpuResource', trans.__('GPU resource name'))}
              {text('cpu', trans.__('CPU per node'), {
                placeholder: trans.__('e.g. 4 or 500m')
              })}
              {text('memory', trans.__('Memory per node'), {
                placeholder: trans.__('e.g. 16Gi')
              })}
              {text('nprocPerNode', trans.__('Processes per node'), {
                placeholder: trans.__('default'),
                hint: trans.__(
                  'Default: the GPUs per node, or 1 on CPU. More than 1 runs torchrun.'
                )
              })}
            </>
          )}
          {section(
            'storage',
            trans.__('Storage'),
            <>
              <PvcEditor
                rows={state.pvc}
                volumes={model.volumes}
                errors={errors}
                trans={trans}
                idPrefix={this.id}
                onChange={pvc => set({ pvc })}
              />
              {field(
                'shm',
                trans.__('Shared memory (/dev/shm)'),
                (id, describedBy) => (
                  <span className="jp-PyTorchJobForm-shm">
                    <label className="jp-PyTorchJobForm-inline">
                      <input
                        type="checkbox"
                        checked={state.shmEnabled}
                        aria-label={trans.__('Mount a memory-backed /dev/shm')}
                        onChange={e =>
                          set({ shmEnabled: e.currentTarget.checked })
                        }
                      />
                      {trans.__('On')}
                    </label>
                    <input
                      id={id}
                      className="jp-mod-styled"
                      type="text"
                      value={state.shm}
                      disabled={!state.shmEnabled}
                      aria-describedby={describedBy}
                      onChange={e => set({ shm: e.currentTarget.value })}
                    />
                  </span>
                ),
                shmHint
              )}
              {text('logdir', trans.__('TensorBoard log directory'), {
                placeholder: Private.EXAMPLE_LOGDIR,
                hint: trans.__(
                  'The job finds it in $PTJOB_LOGDIR; put it on a PVC so that TensorBoard can read it.'
                )
              })}
            </>
          )}
          {section(
            'advanced',
            trans.__('Advanced'),
            <>
              <KeyValueEditor
                field="env"
                label={trans.__('Environment variables')}
                rows={state.env}
                errors={errors}
                trans={trans}
                onChange={env => set({ env })}
              />
              {select(
                'restartPolicy',
                trans.__('Restart policy'),
                RESTART_POLICIES
              )}
              {text('backoffLimit', trans.__('Backoff limit'), {
                placeholder: '3',
                hint: trans.__('Restarts before the job fails.')
              })}
              {text('deadline', trans.__('Deadline (seconds)'), {
                hint: trans.__('activeDeadlineSeconds: the job fails after it.')
              })}
              {text('ttl', trans.__('TTL after finished (seconds)'), {
                hint: trans.__('The finished job is removed after it.')
              })}
              {select(
                'cleanPodPolicy',
                trans.__('Clean-pod policy'),
                CLEAN_POD_POLICIES,
                trans.__(
                  'Running stops stragglers when the job ends and keeps finished pods’ logs.'
                )
              )}
              <KeyValueEditor
                field="nodeSelector"
                label={trans.__('Node selector')}
                rows={state.nodeSelector}
                errors={errors}
                trans={trans}
                onChange={nodeSelector => set({ nodeSelector })}
              />
              <TolerationEditor
                rows={state.tolerations}
                errors={errors}
                trans={trans}
                onChange={tolerations => set({ tolerations })}
              />
              <KeyValueEditor
                field="labels"
                label={trans.__('Labels')}
                rows={state.labels}
                errors={errors}
                trans={trans}
                onChange={labels => set({ labels })}
              />
              <KeyValueEditor
                field="annotations"
                label={trans.__('Annotations')}
                rows={state.annotations}
                errors={errors}
                trans={trans}
                onChange={annotations => set({ annotations })}
              />
              {text('queue', trans.__('Kueue queue'), {
                hint: trans.__('LocalQueue name (kueue.x-k8s.io/queue-name).')
              })}
              {Object.keys(state.extras).length > 0 && (
                <div className="jp-PyTorchJobForm-field" data-field="extras">
                  <span className="jp-PyTorchJobForm-label">
                    {trans.__('Other manifest fields')}
                  </span>
                  <div className="jp-PyTorchJobForm-hint">
                    {trans.__(
                      'Kept from the YAML: %1',
                      Object.keys(state.extras).join(', ')
                    )}
                  </div>
                  {errorsUnder(errors, 'extras').map((m, i) => (
                    <div className="jp-PyTorchJobForm-error" key={i}>
                      {m}
                    </div>
                  ))}
                </div>
              )}
            </>
          )}
          {model.generalError && (
            <p className="jp-PyTorchJobForm-generalError" role="alert">
              {model.generalError}
            </p>
          )}
          <div className="jp-PyTorchJobForm-buttons">
            <button
              type="button"
              className="jp-mod-styled jp-PyTorchJobForm-previewButton"
              aria-pressed={this._preview}
              onClick={() => {
                this.preview = !this._preview;
              }}
            >
              {this._preview ? trans.__('Hide YAML') : trans.__('Preview YAML')}
            </button>
            <button
              type="submit"
              className="jp-mod-styled jp-mod-accept jp-PyTorchJobForm-submit"
              disabled={model.submitting}
              aria-busy={model.submitting}
            >
              {model.submitting ? trans.__('Submitting…') : trans.__('Submit')}
            </button>
            {model.submitting && (
              <progress
                className="jp-PyTorchJobForm-progress"
                aria-label={trans.__('Submitting…')}
              />
            )}
            <span className="jp-PyTorchJobForm-validity" role="status">
              {model.validating
                ? trans.__('Checking…')
                : model.errors.size > 0
                  ? trans._n(
                      '%1 field to fix',
                      '%1 fields to fix',
                      model.errors.size
                    )
                  : model.yaml
                    ? trans.__('Valid')
                    : ''}
            </span>
          </div>
        </form>
        {this._preview && (
          <aside
            className="jp-PyTorchJobForm-yaml"
            aria-label={trans.__('YAML preview')}
          >
            <h3>{trans.__('Manifest (YAML)')}</h3>
            <p className="jp-PyTorchJobForm-hint">
              {trans.__(
                'Edit the manifest and apply it to update the form; fields the form does not know are kept.'
              )}
            </p>
            <textarea
              className="jp-PyTorchJobForm-code jp-PyTorchJobForm-yamlText"
              spellCheck={false}
              aria-label={trans.__('Manifest (YAML)')}
              value={model.yamlDraft}
              onChange={e => model.setYamlDraft(e.currentTarget.value)}
            />
            {model.yamlError && (
              <pre className="jp-PyTorchJobForm-error" role="alert">
                {model.yamlError}
              </pre>
            )}
            {model.yamlWarnings.map(warning => (
              <p
                key={warning}
                className="jp-PyTorchJobForm-warning"
                role="status"
              >
                {warning}
              </p>
            ))}
            <div className="jp-PyTorchJobForm-buttons">
              <button
                type="button"
                className="jp-mod-styled jp-mod-accept"
                disabled={!model.yamlEdited}
                onClick={() => void model.applyYaml()}
              >
                {trans.__('Apply YAML')}
              </button>
              <button
                type="button"
                className="jp-mod-styled"
                disabled={!model.yamlEdited}
                onClick={() => model.resetYaml()}
              >
                {trans.__('Discard edits')}
              </button>
            </div>
          </aside>
        )}
      </div>
    );
  }

  private _trans: TranslationBundle;
  private _onSubmitted: (job: IJob) => void;
  private _preview = false;
  private _open = new Set<FormSection>(['basics', 'resources', 'storage']);
}

/**
 * A namespace for `JobForm` types.
 */
export namespace JobForm {
  /**
   * The options of a form.
   */
  export interface IOptions {
    /**
     * The model.
     */
    model: JobFormModel;

    /**
     * The translation bundle.
     */
    trans: TranslationBundle;

    /**
     * Called with the job once submitted.
     */
    onSubmitted: (job: IJob) => void;
  }
}

/**
 * The error lines of a field and its children.
 */
function FieldErrors(props: {
  errors: Map<string, string[]>;
  field: string;
}): JSX.Element | null {
  const messages = errorsUnder(props.errors, props.field);
  if (messages.length === 0) {
    return null;
  }
  return (
    <div className="jp-PyTorchJobForm-error" role="alert">
      {messages.map((m, i) => (
        <div key={i}>{m}</div>
      ))}
    </div>
  );
}

/**
 * An editor of a string map.
 */
function KeyValueEditor(props: {
  field: string;
  label: string;
  rows: IKeyValue[];
  errors: Map<string, string[]>;
  trans: TranslationBundle;
  onChange: (rows: IKeyValue[]) => void;
}): JSX.Element {
  const { field, label, rows, trans, onChange } = props;
  const update = (i: number, patch: Partial<IKeyValue>) =>
    onChange(rows.map((row, j) => (j === i ? { ...row, ...patch } : row)));
  return (
    <fieldset
      className="jp-PyTorchJobForm-field jp-PyTorchJobForm-rows"
      data-field={field}
    >
      <legend>{label}</legend>
      {rows.map((row, i) => (
        <div className="jp-PyTorchJobForm-row" key={i}>
          <input
            className="jp-mod-styled"
            type="text"
            spellCheck={false}
            placeholder={trans.__('key')}
            aria-label={trans.__('%1: key %2', label, i + 1)}
            value={row.key}
            onChange={e => update(i, { key: e.currentTarget.value })}
          />
          <span aria-hidden="true">=</span>
          <input
            className="jp-mod-styled"
            type="text"
            spellCheck={false}
            placeholder={trans.__('value')}
            aria-label={trans.__('%1: value %2', label, i + 1)}
            value={row.value}
            onChange={e => update(i, { value: e.currentTarget.value })}
          />
          <RemoveButton
            label={trans.__('Remove')}
            onClick={() => onChange(rows.filter((_, j) => j !== i))}
          />
        </div>
      ))}
      <AddButton
        label={trans.__('Add')}
        onClick={() => onChange([...rows, { key: '', value: '' }])}
      />
      <FieldErrors errors={props.errors} field={field} />
    </fieldset>
  );
}

/**
 * The editor of PVC mounts, with the namespace's claims to pick from.
 */
function PvcEditor(props: {
  rows: IPvcRow[];
  volumes: readonly IVolume[];
  errors: Map<string, string[]>;
  trans: TranslationBundle;
  idPrefix: string;
  onChange: (rows: IPvcRow[]) => void;
}): JSX.Element {
  const { rows, volumes, trans, onChange } = props;
  const listId = `${props.idPrefix}-claims`;
  const update = (i: number, patch: Partial<IPvcRow>) =>
    onChange(rows.map((row, j) => (j === i ? { ...row, ...patch } : row)));
  return (
    <fieldset
      className="jp-PyTorchJobForm-field jp-PyTorchJobForm-rows"
      data-field="pvc"
    >
      <legend>{trans.__('Volumes (PVCs)')}</legend>
      <datalist id={listId}>
        {volumes.map(v => (
          <option key={v.name} value={v.name}>
            {[v.capacity, v.access_modes.join(', '), v.phase]
              .filter(Boolean)
              .join(' · ')}
          </option>
        ))}
      </datalist>
      {rows.map((row, i) => {
        const volume = volumes.find(v => v.name === row.claim);
        return (
          <div className="jp-PyTorchJobForm-pvc" key={i} data-row={i}>
            <div className="jp-PyTorchJobForm-row">
              <input
                className="jp-mod-styled"
                type="text"
                list={listId}
                spellCheck={false}
                placeholder={trans.__('claim')}
                aria-label={trans.__('Claim of volume %1', i + 1)}
                value={row.claim}
                onChange={e => update(i, { claim: e.currentTarget.value })}
              />
              <input
                className="jp-mod-styled"
                type="text"
                spellCheck={false}
                placeholder={trans.__('mount path')}
                aria-label={trans.__('Mount path of volume %1', i + 1)}
                value={row.mountPath}
                onChange={e => update(i, { mountPath: e.currentTarget.value })}
              />
              <input
                className="jp-mod-styled"
                type="text"
                spellCheck={false}
                placeholder={trans.__('sub-path')}
                aria-label={trans.__('Sub-path of volume %1', i + 1)}
                value={row.subPath}
                onChange={e => update(i, { subPath: e.currentTarget.value })}
              />
              <label className="jp-PyTorchJobForm-inline">
                <input
                  type="checkbox"
                  checked={row.readOnly}
                  onChange={e =>
                    update(i, { readOnly: e.currentTarget.checked })
                  }
                />
                {trans.__('read-only')}
              </label>
              <RemoveButton
                label={trans.__('Remove')}
                onClick={() => onChange(rows.filter((_, j) => j !== i))}
              />
            </div>
            {volume && (
              <div className="jp-PyTorchJobForm-hint">
                {[
                  volume.capacity,
                  volume.access_modes.join(', '),
                  volume.phase,
                  volume.local_path
                ]
                  .filter(Boolean)
                  .join(' · ')}
              </div>
            )}
            <FieldErrors errors={props.errors} field={`pvc[${i}]`} />
          </div>
        );
      })}
      <AddButton
        label={trans.__('Add volume')}
        onClick={() =>
          onChange([
            ...rows,
            { claim: '', mountPath: '', subPath: '', readOnly: false }
          ])
        }
      />
      <FieldErrors errors={props.errors} field="pvc" />
    </fieldset>
  );
}

/**
 * The editor of tolerations.
 */
function TolerationEditor(props: {
  rows: ITolerationRow[];
  errors: Map<string, string[]>;
  trans: TranslationBundle;
  onChange: (rows: ITolerationRow[]) => void;
}): JSX.Element {
  const { rows, trans, onChange } = props;
  const update = (i: number, patch: Partial<ITolerationRow>) =>
    onChange(rows.map((row, j) => (j === i ? { ...row, ...patch } : row)));
  return (
    <fieldset
      className="jp-PyTorchJobForm-field jp-PyTorchJobForm-rows"
      data-field="tolerations"
    >
      <legend>{trans.__('Tolerations')}</legend>
      {rows.map((row, i) => (
        <div className="jp-PyTorchJobForm-row" key={i}>
          <input
            className="jp-mod-styled"
            type="text"
            placeholder={trans.__('key')}
            aria-label={trans.__('Key of toleration %1', i + 1)}
            value={row.key}
            onChange={e => update(i, { key: e.currentTarget.value })}
          />
          <select
            className="jp-mod-styled"
            aria-label={trans.__('Operator of toleration %1', i + 1)}
            value={row.operator}
            onChange={e => update(i, { operator: e.currentTarget.value })}
          >
            {Private.OPERATORS.map(op => (
              <option key={op} value={op}>
                {op}
              </option>
            ))}
          </select>
          <input
            className="jp-mod-styled"
            type="text"
            placeholder={trans.__('value')}
            aria-label={trans.__('Value of toleration %1', i + 1)}
            value={row.value}
            disabled={row.operator === 'Exists'}
            onChange={e => update(i, { value: e.currentTarget.value })}
          />
          <select
            className="jp-mod-styled"
            aria-label={trans.__('Effect of toleration %1', i + 1)}
            value={row.effect}
            onChange={e => update(i, { effect: e.currentTarget.value })}
          >
            {TOLERATION_EFFECTS.map(effect => (
              <option key={effect} value={effect}>
                {effect || trans.__('all effects')}
              </option>
            ))}
          </select>
          <RemoveButton
            label={trans.__('Remove')}
            onClick={() => onChange(rows.filter((_, j) => j !== i))}
          />
        </div>
      ))}
      <AddButton
        label={trans.__('Add toleration')}
        onClick={() =>
          onChange([
            ...rows,
            { key: '', operator: 'Equal', value: '', effect: '' }
          ])
        }
      />
      <FieldErrors errors={props.errors} field="tolerations" />
    </fieldset>
  );
}

/**
 * A small "add a row" button.
 */
function AddButton(props: { label: string; onClick: () => void }): JSX.Element {
  return (
    <button
      type="button"
      className="jp-PyTorchJobForm-add"
      onClick={props.onClick}
    >
      <addIcon.react tag="span" elementSize="normal" />
      {props.label}
    </button>
  );
}

/**
 * A small "remove this row" button.
 */
function RemoveButton(props: {
  label: string;
  onClick: () => void;
}): JSX.Element {
  return (
    <button
      type="button"
      className="jp-PyTorchJobForm-remove"
      title={props.label}
      aria-label={props.label}
      onClick={props.onClick}
    >
      <closeIcon.react tag="span" elementSize="normal" />
    </button>
  );
}

/**
 * Module-private constants: examples and API values, not prose to translate.
 */
namespace Private {
  /**
   * The example command.
   */
  export const EXAMPLE_COMMAND = 'python train.py --epochs 3';

  /**
   * The example arguments.
   */
  export const EXAMPLE_ARGS = '--epochs 3';

  /**
   * The example log directory.
   */
  export const EXAMPLE_LOGDIR = '/home/jovyan/runs/exp1';

  /**
   * The toleration operators of the Kubernetes API.
   */
  export const OPERATORS = ['Equal', 'Exists'];
}
