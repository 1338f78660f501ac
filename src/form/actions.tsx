/**
 * What the form does: submit (with the form's validity beside it), and the
 * YAML preview whose edits update the form.
 *
 * @packageDocumentation
 */

import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { JobFormModel } from './model';

/**
 * The buttons under the form: YAML preview, submit, and the validity.
 */
export function SubmitBar(props: {
  model: JobFormModel;
  trans: TranslationBundle;
  preview: boolean;
  togglePreview: () => void;
  /**
   * The labels of the fields whose errors are shown.
   */
  toFix: readonly string[];
}): JSX.Element {
  const { model, trans } = props;
  return (
    <div className="jp-PyTorchJobForm-buttons jp-PyTorchJobForm-submitBar">
      <button
        type="button"
        className="jp-mod-styled jp-PyTorchJobForm-previewButton"
        aria-pressed={props.preview}
        onClick={props.togglePreview}
      >
        {props.preview ? trans.__('Hide YAML') : trans.__('Preview YAML')}
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
          : props.toFix.length > 0
            ? trans._n(
                '%1 field to fix: %2',
                '%1 fields to fix: %2',
                props.toFix.length,
                props.toFix.join(', ')
              )
            : model.yaml && model.errors.size === 0
              ? trans.__('Valid')
              : ''}
      </span>
    </div>
  );
}

/**
 * The editable manifest beside the form.
 */
export function YamlPreview(props: {
  model: JobFormModel;
  trans: TranslationBundle;
}): JSX.Element {
  const { model, trans } = props;
  return (
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
        <p key={warning} className="jp-PyTorchJobForm-warning" role="status">
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
  );
}
