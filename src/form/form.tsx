/**
 * The job form: Basics / Resources / Storage / Advanced, live validation,
 * the editable YAML preview, and submission.
 *
 * @packageDocumentation
 */

import { CodeEditor } from '@jupyterlab/codeeditor';
import { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import * as React from 'react';

import { IJob } from '../tokens';
import { pytorchIcon } from '../icons';
import { IFormContext, textOf } from './fields';
import { JobFormModel } from './model';
import { Section, SectionFields } from './sections';
import { FORM_SECTIONS, FormSection, sectionShown, TRAINJOB } from './state';
import { FormTexts, formTexts } from './texts';
import { SubmitBar, YamlPreview } from './actions';

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
    this._texts = formTexts(options.trans);
    this._onSubmitted = options.onSubmitted;
    this._editorFactory = options.editorFactory ?? null;
    this.addClass('jp-PyTorchJobForm');
    this.title.icon = pytorchIcon;
    this._updateTitle();
    this.model.changed.connect(() => {
      this._updateTitle();
      this.update();
    }, this);
    void this.model.loadVolumes();
    void this.model.loadRuntimes();
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
      await this.renderPromise;
      this.focusFirstInvalid();
    }
  }

  /**
   * Scroll to the first field with an error and put the focus in it.
   */
  focusFirstInvalid(): void {
    const error = this.node.querySelector('.jp-PyTorchJobForm-error');
    const field = error?.closest('[data-field]') ?? null;
    if (!field) {
      return;
    }
    field.scrollIntoView?.({ block: 'center' });
    field
      .querySelector<HTMLElement>('input:not([disabled]), select, textarea')
      ?.focus();
  }

  /**
   * The tab says what the form makes: a TrainJob or a PyTorchJob.
   */
  private _updateTitle(): void {
    const label =
      this.model.state.kind === TRAINJOB
        ? this._trans.__('New TrainJob')
        : this._trans.__('New PyTorchJob');
    if (this.title.label !== label) {
      this.title.label = label;
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
    const form: IFormContext = {
      state: model.state,
      set: patch => model.set(patch),
      errors: model.visibleErrors,
      trans,
      texts: this._texts,
      fields: model.fields,
      idPrefix: this.id,
      supported: model.supported,
      kinds: model.kinds,
      runtimes: model.runtimes,
      runtimesError: model.runtimesError,
      pickRuntime: name => model.pickRuntime(name)
    };
    const withErrors = model.sectionsWithErrors;
    return (
      <div
        className={
          'jp-PyTorchJobForm-layout' + (this._preview ? ' jp-mod-preview' : '')
        }
      >
        <form
          className="jp-PyTorchJobForm-form"
          aria-label={this.title.label}
          onSubmit={e => {
            e.preventDefault();
            void this.submit();
          }}
        >
          <h2 className="jp-PyTorchJobForm-title">{this.title.label}</h2>
          {FORM_SECTIONS.filter(id =>
            sectionShown(id, model.fields, form.supported)
          ).map(id => {
            return (
              <Section
                key={id}
                form={form}
                id={id}
                open={this._open.has(id) || withErrors.has(id)}
                hasErrors={withErrors.has(id)}
                onToggle={() => this._toggle(id)}
              >
                <SectionFields
                  form={form}
                  section={id}
                  volumes={model.volumes}
                />
              </Section>
            );
          })}
          {model.warnings.map(warning => (
            <p
              key={warning}
              className="jp-PyTorchJobForm-warning"
              role="status"
            >
              {warning}
            </p>
          ))}
          {model.generalError && (
            <p className="jp-PyTorchJobForm-generalError" role="alert">
              {model.generalError}
            </p>
          )}
          <SubmitBar
            model={model}
            trans={trans}
            preview={this._preview}
            togglePreview={() => {
              this.preview = !this._preview;
            }}
            toFix={[
              ...new Set(
                [...form.errors.keys()].map(key => key.split(/[[.]/)[0])
              )
            ].map(name => textOf(form, name).label)}
          />
        </form>
        {this._preview && (
          <YamlPreview
            model={model}
            trans={trans}
            editorFactory={this._editorFactory}
          />
        )}
      </div>
    );
  }

  /**
   * Open or close a section.
   */
  private _toggle(id: FormSection): void {
    if (this._open.has(id)) {
      this._open.delete(id);
    } else {
      this._open.add(id);
    }
    this.update();
  }

  private _trans: TranslationBundle;
  private _editorFactory: CodeEditor.Factory | null;
  private _onSubmitted: (job: IJob) => void;
  private _texts: FormTexts;
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

    /**
     * Makes the YAML preview's editor (JupyterLab's CodeMirror); absent or
     * null: a plain text area.
     */
    editorFactory?: CodeEditor.Factory | null;
  }
}
