/**
 * The form's field components, one per kind of control: text, number,
 * select, choice, code, and the frame every field shares (label, help,
 * errors). Their texts come from `texts.ts`.
 *
 * @packageDocumentation
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { addIcon, closeIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import { IFieldInfo, IJobKind, IRuntime } from '../tokens';
import {
  defaultText,
  errorsUnder,
  IFormState,
  isShown,
  stateText
} from './state';
import { FormTexts, IFieldText } from './texts';

/**
 * What every field of a form works with.
 */
export interface IFormContext {
  /**
   * The form's fields as typed.
   */
  state: IFormState;

  /**
   * Change some fields.
   */
  set: (patch: Partial<IFormState>) => void;

  /**
   * The messages to show, by field.
   */
  errors: Map<string, string[]>;

  /**
   * The translation bundle.
   */
  trans: TranslationBundle;

  /**
   * The texts of the fields.
   */
  texts: FormTexts;

  /**
   * Every field's section, default and choices, as the server declares them.
   */
  fields: Record<string, IFieldInfo>;

  /**
   * The prefix of the element ids of this form (its widget's id).
   */
  idPrefix: string;

  /**
   * The body fields the chosen kind expresses (the others are hidden);
   * `null`: every field.
   */
  supported: ReadonlySet<string> | null;

  /**
   * The kinds the backend runs (a switch when more than one).
   */
  kinds: readonly IJobKind[];

  /**
   * The runtimes a TrainJob can run on, and why they could not be listed.
   */
  runtimes: readonly IRuntime[];
  runtimesError: string;

  /**
   * Choose a runtime, taking its image and node count.
   */
  pickRuntime: (name: string) => void;
}

/**
 * Whether the form shows a setting for the chosen kind.
 */
export function shown(form: IFormContext, name: string): boolean {
  return isShown(name, form.fields, form.supported);
}

/**
 * The props of a field component.
 */
export interface IFieldProps<N extends string = string> {
  /**
   * The form.
   */
  form: IFormContext;

  /**
   * The setting the field edits.
   */
  name: N;
}

/**
 * The settings typed as one line of text (wire names, and `mode`).
 */
export type TextSetting = string;

/**
 * What the form says of a setting: `texts.ts`'s words, else the label and
 * hint the server declares for the field, translated.
 */
export function textOf(form: IFormContext, name: string): IFieldText {
  const own = (form.texts.fields as Record<string, IFieldText | undefined>)[
    name
  ];
  if (own) {
    return own;
  }
  const info = form.fields[name];
  return {
    label: info?.label ? form.trans.__(info.label) : name,
    hint: info?.hint ? form.trans.__(info.hint) : undefined
  };
}

/**
 * Set a text setting.
 */
function setText(form: IFormContext, name: TextSetting, value: string): void {
  form.set({ [name]: value } as Partial<IFormState>);
}

/**
 * The frame of a field: its label, the control, its help and its errors.
 */
export function Field(props: {
  form: IFormContext;
  name: string;
  hint?: React.ReactNode;
  control: (id: string, describedBy: string) => React.ReactNode;
}): JSX.Element | null {
  const { form, name } = props;
  if (!shown(form, name)) {
    return null;
  }
  const id = `${form.idPrefix}-f-${name}`;
  const hint = props.hint ?? textOf(form, name).hint;
  const invalid = errorsUnder(form.errors, name).length > 0;
  return (
    <div
      className={'jp-PyTorchJobForm-field' + (invalid ? ' jp-mod-invalid' : '')}
      data-field={name}
    >
      <label htmlFor={id}>{textOf(form, name).label}</label>
      {props.control(id, `${id}-hint ${id}-error`)}
      {hint && (
        <div className="jp-PyTorchJobForm-hint" id={`${id}-hint`}>
          {hint}
        </div>
      )}
      <FieldErrors
        errors={form.errors}
        field={name}
        id={`${id}-error`}
        label={textOf(form, name).label}
      />
    </div>
  );
}

/**
 * A one-line text field.
 */
export function TextField(
  props: IFieldProps<TextSetting> & {
    hint?: React.ReactNode;
    placeholder?: string;
  }
): JSX.Element | null {
  const { form, name } = props;
  return (
    <Field
      form={form}
      name={name}
      hint={props.hint}
      control={(id, describedBy) => (
        <input
          id={id}
          className="jp-mod-styled"
          type="text"
          spellCheck={false}
          value={stateText(form.state, name)}
          placeholder={
            props.placeholder ??
            textOf(form, name).placeholder ??
            (defaultText(form.fields, name) || undefined)
          }
          aria-invalid={form.errors.has(name)}
          aria-describedby={describedBy}
          onChange={e => setText(form, name, e.currentTarget.value)}
        />
      )}
    />
  );
}

/**
 * A number field (kept as typed: the server validates it).
 */
export function NumberField(
  props: IFieldProps<TextSetting> & { min: number; hint?: React.ReactNode }
): JSX.Element | null {
  const { form, name } = props;
  return (
    <Field
      form={form}
      name={name}
      hint={props.hint}
      control={(id, describedBy) => (
        <input
          id={id}
          className="jp-mod-styled"
          type="number"
          min={props.min}
          value={stateText(form.state, name)}
          aria-describedby={describedBy}
          onChange={e => setText(form, name, e.currentTarget.value)}
        />
      )}
    />
  );
}

/**
 * A choice among API values, shown as they are.
 */
export function SelectField(
  props: IFieldProps<TextSetting> & { choices: readonly string[] }
): JSX.Element | null {
  const { form, name } = props;
  return (
    <Field
      form={form}
      name={name}
      control={(id, describedBy) => (
        <select
          id={id}
          className="jp-mod-styled"
          value={stateText(form.state, name)}
          aria-describedby={describedBy}
          onChange={e => setText(form, name, e.currentTarget.value)}
        >
          {props.choices.map(choice => (
            <option key={choice} value={choice}>
              {textOf(form, name).choices?.[choice] ?? choice}
            </option>
          ))}
        </select>
      )}
    />
  );
}

/**
 * A multi-line code field.
 */
export function CodeField(
  props: IFieldProps<TextSetting> & { rows: number }
): JSX.Element | null {
  const { form, name } = props;
  return (
    <Field
      form={form}
      name={name}
      control={(id, describedBy) => (
        <textarea
          id={id}
          className="jp-PyTorchJobForm-code"
          rows={props.rows}
          spellCheck={false}
          value={stateText(form.state, name)}
          aria-describedby={describedBy}
          onChange={e => setText(form, name, e.currentTarget.value)}
        />
      )}
    />
  );
}

/**
 * A choice among the labelled values of a setting, as radio buttons.
 */
export function RadioField(props: IFieldProps<TextSetting>): JSX.Element {
  const { form, name } = props;
  const text = textOf(form, name);
  return (
    <div
      className="jp-PyTorchJobForm-field"
      role="radiogroup"
      aria-label={text.ariaLabel}
    >
      <span className="jp-PyTorchJobForm-label">{text.label}</span>
      {Object.entries(text.choices ?? {}).map(([value, label]) => (
        <label className="jp-PyTorchJobForm-inline" key={value}>
          <input
            type="radio"
            name={`${form.idPrefix}-${name}`}
            checked={stateText(form.state, name) === value}
            onChange={() => setText(form, name, value)}
          />
          {label}
        </label>
      ))}
    </div>
  );
}

/**
 * The error lines of a field and its children.
 */
export function FieldErrors(props: {
  errors: Map<string, string[]>;
  field: string;
  id?: string;
  /**
   * The field's label, which starts a message that starts mid-sentence
   * ("is required: …" becomes "Name is required: …").
   */
  label?: string;
}): JSX.Element | null {
  const own = new Set(props.errors.get(props.field) ?? []);
  const messages = errorsUnder(props.errors, props.field).map(message =>
    props.label && own.has(message) && /^[a-z]/.test(message)
      ? `${props.label} ${message}`
      : message
  );
  if (messages.length === 0) {
    return null;
  }
  return (
    <div className="jp-PyTorchJobForm-error" id={props.id} role="alert">
      {messages.map((m, i) => (
        <div key={i}>{m}</div>
      ))}
    </div>
  );
}

/**
 * A small "add a row" button.
 */
export function AddButton(props: {
  label: string;
  onClick: () => void;
}): JSX.Element {
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
export function RemoveButton(props: {
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
