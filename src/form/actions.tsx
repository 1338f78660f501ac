/**
 * What the form does: submit (with the form's validity beside it), and the
 * YAML preview whose edits update the form.
 *
 * @packageDocumentation
 */

import { CodeEditor } from '@jupyterlab/codeeditor';
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
  editorFactory?: CodeEditor.Factory | null;
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
      {props.editorFactory ? (
        <YamlEditor
          factory={props.editorFactory}
          value={model.yamlDraft}
          onChange={text => model.setYamlDraft(text)}
          label={trans.__('Manifest (YAML)')}
        />
      ) : (
        <textarea
          className="jp-PyTorchJobForm-code jp-PyTorchJobForm-yamlText"
          spellCheck={false}
          aria-label={trans.__('Manifest (YAML)')}
          value={model.yamlDraft}
          onChange={e => model.setYamlDraft(e.currentTarget.value)}
        />
      )}
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

/**
 * JupyterLab's own editor on YAML text: CodeMirror with the YAML language,
 * line numbers and the theme's colours. It follows `value` when that changes
 * from outside (applied, discarded, re-rendered) and reports each edit.
 */
export function YamlEditor(props: {
  factory: CodeEditor.Factory;
  value: string;
  onChange: (text: string) => void;
  label: string;
}): JSX.Element {
  const host = React.useRef<HTMLDivElement>(null);
  const editor = React.useRef<CodeEditor.IEditor | null>(null);
  const onChange = React.useRef(props.onChange);
  onChange.current = props.onChange;
  const labelRef = React.useRef(props.label);
  React.useEffect(() => {
    const model = new CodeEditor.Model({ mimeType: YAML_MIME });
    model.sharedModel.setSource(props.value);
    const created = props.factory({
      host: host.current!,
      model,
      config: { lineNumbers: true }
    });
    editor.current = created;
    // Its text is the manifest: named so for assistive technologies.
    host
      .current!.querySelector('.cm-content')
      ?.setAttribute('aria-label', labelRef.current);
    const changed = () => onChange.current(model.sharedModel.getSource());
    model.sharedModel.changed.connect(changed);
    return () => {
      model.sharedModel.changed.disconnect(changed);
      editor.current = null;
      created.dispose();
      model.dispose();
    };
  }, [props.factory]);
  // On every render: the text may have been changed from outside back to
  // the value of the last render (a discard after an edit).
  React.useEffect(() => {
    const model = editor.current?.model;
    if (model && model.sharedModel.getSource() !== props.value) {
      model.sharedModel.setSource(props.value);
    }
  });
  return (
    <div
      ref={host}
      className="jp-PyTorchJobForm-yamlEditor"
      role="group"
      aria-label={props.label}
    />
  );
}

/**
 * The MIME type JupyterLab's language registry knows YAML by.
 */
const YAML_MIME = 'text/x-yaml';
