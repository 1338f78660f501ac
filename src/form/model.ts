/**
 * The job form's model: its state, live validation through `POST render`,
 * the YAML preview and its read-back, and submission.
 *
 * @packageDocumentation
 */

import { nullTranslator, TranslationBundle } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { PyTorchJobClient } from '../api';
import { PyTorchJobAPIError } from '../request';
import { translateMessage, warningsOf } from '../servermessages';
import {
  IFieldInfo,
  IJob,
  IJobBody,
  IJobKind,
  IRenderResult,
  IRuntime,
  IVolume
} from '../tokens';
import {
  bodyToState,
  defaultFormState,
  errorsByField,
  FormSection,
  IFormDefaults,
  IFormState,
  kindFields,
  sectionOf,
  splitWords,
  stateToBody,
  suggestName,
  TRAINJOB
} from './state';

/**
 * The subset of the REST client the form uses.
 */
export type FormClient = Pick<
  PyTorchJobClient,
  'render' | 'renderYaml' | 'submit' | 'volumes' | 'runtimes'
>;

/**
 * The model of a job form.
 */
export class JobFormModel implements IDisposable {
  /**
   * Construct a form, pre-filled with `initial` over the defaults.
   */
  constructor(options: JobFormModel.IOptions) {
    this._client = options.client;
    this._trans = options.trans ?? nullTranslator.load('jupyter_pytorchjob');
    this._debounce = options.debounce ?? 400;
    const base = defaultFormState(options.defaults);
    let state = options.initial
      ? bodyToState(options.initial, base, options.defaults.fields)
      : base;
    if (!state.name) {
      const hint =
        state.mode === 'command'
          ? splitWords(state.command).find(w => /\.(py|sh)$/.test(w))
          : null;
      state = {
        ...state,
        name: suggestName(hint ?? splitWords(state.command)[0])
      };
    }
    this._state = state;
    this._defaultImage = options.defaults.image;
    this.fields = options.defaults.fields;
    this.kinds = options.defaults.kinds ?? [];
  }

  /**
   * Every field's section, default and choices, as the server declares them.
   */
  readonly fields: Record<string, IFieldInfo>;

  /**
   * The kinds the backend runs, preferred first (a switch shows them when
   * there is more than one).
   */
  readonly kinds: readonly IJobKind[];

  /**
   * The body fields the chosen kind expresses (the form hides the others);
   * `null`: every field.
   */
  get supported(): ReadonlySet<string> | null {
    return kindFields(this.kinds, this._state.kind);
  }

  /**
   * The Kubeflow Trainer runtimes a TrainJob can run on (`GET runtimes`).
   */
  get runtimes(): readonly IRuntime[] {
    return this._runtimes;
  }

  /**
   * Why the runtimes could not be listed (empty when they were, or were not asked for).
   */
  get runtimesError(): string {
    return this._runtimesError;
  }

  /**
   * The form's fields.
   */
  get state(): IFormState {
    return this._state;
  }

  /**
   * The server's messages by field, from the last validation.
   */
  get errors(): Map<string, string[]> {
    return this._errors;
  }

  /**
   * The server's messages for the fields the user has touched (every field
   * after a submission attempt), so that a fresh form is not all red.
   */
  get visibleErrors(): Map<string, string[]> {
    if (this._attempted) {
      return this._errors;
    }
    const visible = new Map<string, string[]>();
    for (const [field, messages] of this._errors) {
      const root = field.split(/[[.]/)[0];
      // Switching to a script is no edit of it: "is empty" waits for one.
      if (
        this._touched.has(root) ||
        (root === 'shm' && this._touched.has('shmEnabled'))
      ) {
        visible.set(field, messages);
      }
    }
    return visible;
  }

  /**
   * A failure that is not about a field (e.g. the server is unreachable).
   */
  get generalError(): string {
    return this._generalError;
  }

  /**
   * The manifest of the last valid state, as YAML.
   */
  get yaml(): string {
    return this._yaml;
  }

  /**
   * The text of the YAML editor (the manifest, or the user's edits).
   */
  get yamlDraft(): string {
    return this._yamlDraft ?? this._yaml;
  }

  /**
   * Whether the YAML editor holds edits not yet applied.
   */
  get yamlEdited(): boolean {
    return this._yamlDraft !== null && this._yamlDraft !== this._yaml;
  }

  /**
   * The error of the last *Apply YAML*.
   */
  get yamlError(): string {
    return this._yamlError;
  }

  /**
   * What the server said about the last applied YAML: fields the cluster would
   * drop because its CRD schema does not declare them.
   */
  get yamlWarnings(): readonly string[] {
    return this._yamlWarnings;
  }

  /**
   * What the server says the user should know about the job as it stands (e.g. that
   * restart policy Always never lets the Master succeed), from the last render.
   */
  get warnings(): readonly string[] {
    return this._warnings;
  }

  /**
   * Whether a validation is under way.
   */
  get validating(): boolean {
    return this._validating;
  }

  /**
   * Whether a submission is under way.
   */
  get submitting(): boolean {
    return this._submitting;
  }

  /**
   * The claims a job can mount.
   */
  get volumes(): readonly IVolume[] {
    return this._volumes;
  }

  /**
   * The sections that hold an error.
   */
  get sectionsWithErrors(): Set<FormSection> {
    return new Set(
      [...this.visibleErrors.keys()].map(key => sectionOf(key, this.fields))
    );
  }

  /**
   * The job body of the current state.
   */
  get body(): IJobBody {
    return stateToBody(this._state, this.fields, this.supported);
  }

  /**
   * Emitted after every change.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Whether the model is disposed.
   */
  get isDisposed(): boolean {
    return this._disposed;
  }

  /**
   * Change fields; validation follows after a pause in typing.
   */
  set(patch: Partial<IFormState>): void {
    if (
      patch.kind === TRAINJOB &&
      patch.image === undefined &&
      this._state.image === this._defaultImage
    ) {
      // Our default image would pin it over the runtime's: leave it to the runtime.
      patch = { ...patch, image: '' };
    }
    this._state = { ...this._state, ...patch } as IFormState;
    for (const key of Object.keys(patch)) {
      this._touched.add(key);
    }
    this._changed.emit();
    this.scheduleValidation();
  }

  /**
   * Validate after the debounce delay.
   */
  scheduleValidation(): void {
    if (this._timer !== null) {
      clearTimeout(this._timer);
    }
    this._timer = setTimeout(() => {
      this._timer = null;
      void this.validate();
    }, this._debounce);
  }

  /**
   * Validate now through `POST render`.
   *
   * @returns Whether the state is valid.
   */
  async validate(): Promise<boolean> {
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
    const seq = ++this._seq;
    this._validating = true;
    this._changed.emit();
    let valid = false;
    try {
      const result = await this._client.render(this.body);
      if (seq === this._seq) {
        this._setRendered(result);
        valid = true;
      }
    } catch (error) {
      if (seq === this._seq) {
        this._setError(error);
      }
    }
    if (seq === this._seq && !this._disposed) {
      this._validating = false;
      this._changed.emit();
    }
    return valid;
  }

  /**
   * Edit the YAML editor's text.
   */
  setYamlDraft(text: string): void {
    this._yamlDraft = text;
    this._changed.emit();
  }

  /**
   * Forget the YAML edits.
   */
  resetYaml(): void {
    this._yamlDraft = null;
    this._yamlError = '';
    this._changed.emit();
  }

  /**
   * Read the edited YAML back into the form (through `POST render`).
   *
   * @returns Whether the YAML was valid.
   */
  async applyYaml(): Promise<boolean> {
    const text = this.yamlDraft;
    const seq = ++this._seq;
    try {
      const result = await this._client.renderYaml(text);
      if (seq !== this._seq) {
        return false;
      }
      this._state = bodyToState(result.job, this._state, this.fields);
      this._attempted = true;
      this._yamlDraft = null;
      this._setRendered(result);
      this._yamlWarnings = warningsOf(result, this._trans);
      this._changed.emit();
      return true;
    } catch (error) {
      if (seq === this._seq) {
        this._yamlError =
          error instanceof PyTorchJobAPIError
            ? error.errors.length > 0
              ? error.errors
                  .map(e => `${e.field}: ${translateMessage(e, this._trans)}`)
                  .join('\n')
              : translateMessage(error.problem, this._trans)
            : String(error);
        this._changed.emit();
      }
      return false;
    }
  }

  /**
   * Submit the job.
   *
   * @returns The created job, or `null` when the server refused it (the
   * errors are then in `errors` or `generalError`).
   */
  async submit(): Promise<IJob | null> {
    if (this._submitting) {
      return null;
    }
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
    ++this._seq;
    this._attempted = true;
    this._submitting = true;
    this._generalError = '';
    this._changed.emit();
    try {
      const job = await this._client.submit(this.body);
      this._errors = new Map();
      return job;
    } catch (error) {
      this._setError(error);
      return null;
    } finally {
      this._submitting = false;
      if (!this._disposed) {
        this._changed.emit();
      }
    }
  }

  /**
   * Load the claims a job can mount.
   */
  async loadVolumes(): Promise<void> {
    try {
      this._volumes = await this._client.volumes();
      this._changed.emit();
    } catch {
      // The claim field stays a free text field.
    }
  }

  /**
   * Load the runtimes, where a kind the backend runs names one (TrainJob).
   */
  async loadRuntimes(): Promise<void> {
    if (!this.kinds.some(kind => kind.fields.includes('runtime'))) {
      return;
    }
    try {
      this._runtimes = await this._client.runtimes();
      this._runtimesError = '';
    } catch (error) {
      // The runtime stays a free choice of the server's default.
      this._runtimesError =
        error instanceof Error ? error.message : String(error);
    }
    if (!this._disposed) {
      this._changed.emit();
    }
  }

  /**
   * Choose a runtime (empty: the server's default) and take its node count as
   * the job's; its image runs unless the user typed another (an image that is
   * ours or a runtime's is cleared, so the runtime decides).
   */
  pickRuntime(name: string): void {
    const runtime = this._runtimes.find(r => r.name === name);
    const patch: Partial<IFormState> = { runtime: name };
    if (runtime) {
      patch.nodes = String(runtime.nodes);
    }
    const image = this._state.image;
    if (
      image === this._defaultImage ||
      this._runtimes.some(r => r.image === image)
    ) {
      patch.image = '';
    }
    this.set(patch);
  }

  /**
   * Stop validating.
   */
  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
    Signal.clearData(this);
  }

  private _setRendered(result: IRenderResult): void {
    this._errors = new Map();
    this._generalError = '';
    this._yamlError = '';
    this._yaml = result.yaml;
    this._warnings = warningsOf(result, this._trans);
  }

  private _setError(error: unknown): void {
    if (error instanceof PyTorchJobAPIError && error.errors.length > 0) {
      this._errors = errorsByField(error.errors, this._trans);
      this._generalError = '';
    } else if (error instanceof PyTorchJobAPIError && error.status === 409) {
      this._errors = new Map([
        ['name', [translateMessage(error.problem, this._trans)]]
      ]);
      this._generalError = '';
    } else {
      this._generalError =
        error instanceof PyTorchJobAPIError
          ? translateMessage(error.problem, this._trans)
          : error instanceof Error
            ? error.message
            : String(error);
    }
  }

  private _client: FormClient;
  private _trans: TranslationBundle;
  private _debounce: number;
  private _state: IFormState;
  private _errors = new Map<string, string[]>();
  private _generalError = '';
  private _yaml = '';
  private _yamlDraft: string | null = null;
  private _yamlError = '';
  private _yamlWarnings: readonly string[] = [];
  private _warnings: readonly string[] = [];
  private _validating = false;
  private _submitting = false;
  private _volumes: IVolume[] = [];
  private _runtimes: IRuntime[] = [];
  private _runtimesError = '';
  private _seq = 0;
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _disposed = false;
  private _touched = new Set<string>();
  private _attempted = false;
  private _changed = new Signal<this, void>(this);
  private _defaultImage: string;
}

/**
 * A namespace for `JobFormModel` types.
 */
export namespace JobFormModel {
  /**
   * The options of a form model.
   */
  export interface IOptions {
    /**
     * The REST client.
     */
    client: FormClient;

    /**
     * The defaults of a new job.
     */
    defaults: IFormDefaults;

    /**
     * A job body to start from (a clone, or a file to run).
     */
    initial?: IJobBody;

    /**
     * Milliseconds of quiet before validating (400).
     */
    debounce?: number;

    /**
     * The translation bundle of the server's messages (none: English).
     */
    trans?: TranslationBundle;
  }
}
