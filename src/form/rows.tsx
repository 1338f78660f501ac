/**
 * The form's list fields, edited row by row: string maps (env, labels, …),
 * PVC mounts, tolerations.
 *
 * @packageDocumentation
 */

import * as React from 'react';

import { Choice } from '../choice';
import { IVolume } from '../tokens';
import {
  AddButton,
  FieldErrors,
  IFormContext,
  RemoveButton,
  shown,
  textOf
} from './fields';
import { choicesOf, IFormState, IPvcRow, stateRows } from './state';

/**
 * The settings that are string maps (fields whose codec is `map`).
 */
export type KeyValueSetting = string;

/**
 * An editor of a string map.
 */
export function KeyValueEditor(props: {
  form: IFormContext;
  name: KeyValueSetting;
}): JSX.Element | null {
  const { form, name } = props;
  const { trans } = form;
  const label = textOf(form, name).label;
  const rows = Private.editing(stateRows(form.state, name), value =>
    form.set({ [name]: value } as Partial<IFormState>)
  );
  return (
    <RowsFieldset
      form={form}
      name={name}
      addLabel={trans.__('Add')}
      onAdd={() => rows.add({ key: '', value: '' })}
    >
      {rows.items.map((row, i) => (
        <div className="jp-PyTorchJobForm-row" key={i}>
          <RowInput
            spellCheck={false}
            placeholder={trans.__('key')}
            label={trans.__('%1: key %2', label, i + 1)}
            value={row.key}
            onChange={key => rows.update(i, { key })}
          />
          <span aria-hidden="true">=</span>
          <RowInput
            spellCheck={false}
            placeholder={trans.__('value')}
            label={trans.__('%1: value %2', label, i + 1)}
            value={row.value}
            onChange={value => rows.update(i, { value })}
          />
          <RemoveButton
            label={trans.__('Remove')}
            onClick={() => rows.remove(i)}
          />
        </div>
      ))}
    </RowsFieldset>
  );
}

/**
 * The editor of PVC mounts, with the namespace's claims to pick from.
 */
export function PvcEditor(props: {
  form: IFormContext;
  volumes: readonly IVolume[];
}): JSX.Element | null {
  const { form, volumes } = props;
  const { trans } = form;
  const listId = `${form.idPrefix}-claims`;
  const rows = Private.editing(form.state.pvc, pvc => form.set({ pvc }));
  return (
    <RowsFieldset
      form={form}
      name="pvc"
      addLabel={trans.__('Add volume')}
      onAdd={() =>
        rows.add({ claim: '', mountPath: '', subPath: '', readOnly: false })
      }
    >
      <datalist id={listId}>
        {volumes.map(v => (
          <option key={v.name} value={v.name}>
            {[v.capacity, v.accessModes.join(', '), v.phase]
              .filter(Boolean)
              .join(' · ')}
          </option>
        ))}
      </datalist>
      {rows.items.map((row, i) => (
        <PvcRow
          key={i}
          form={form}
          index={i}
          row={row}
          listId={listId}
          volume={volumes.find(v => v.name === row.claim)}
          update={patch => rows.update(i, patch)}
          remove={() => rows.remove(i)}
        />
      ))}
    </RowsFieldset>
  );
}

/**
 * One PVC mount: claim, mount path, sub-path, read-only; the claim's
 * details under it.
 */
function PvcRow(props: {
  form: IFormContext;
  index: number;
  row: IPvcRow;
  listId: string;
  volume: IVolume | undefined;
  update: (patch: Partial<IPvcRow>) => void;
  remove: () => void;
}): JSX.Element {
  const { form, index: i, row, volume, update } = props;
  const { trans } = form;
  return (
    <div className="jp-PyTorchJobForm-pvc" data-row={i}>
      <div className="jp-PyTorchJobForm-row">
        <RowInput
          list={props.listId}
          spellCheck={false}
          placeholder={trans.__('claim')}
          label={trans.__('Claim of volume %1', i + 1)}
          value={row.claim}
          onChange={claim => update({ claim })}
        />
        <RowInput
          spellCheck={false}
          placeholder={trans.__('mount path')}
          label={trans.__('Mount path of volume %1', i + 1)}
          value={row.mountPath}
          onChange={mountPath => update({ mountPath })}
        />
        <RowInput
          spellCheck={false}
          placeholder={trans.__('sub-path')}
          label={trans.__('Sub-path of volume %1', i + 1)}
          value={row.subPath}
          onChange={subPath => update({ subPath })}
        />
        <label className="jp-PyTorchJobForm-inline">
          <input
            type="checkbox"
            checked={row.readOnly}
            onChange={e => update({ readOnly: e.currentTarget.checked })}
          />
          {trans.__('read-only')}
        </label>
        <RemoveButton label={trans.__('Remove')} onClick={props.remove} />
      </div>
      {volume && (
        <div className="jp-PyTorchJobForm-hint">
          {[
            volume.capacity,
            volume.accessModes.join(', '),
            volume.phase,
            volume.localPath
          ]
            .filter(Boolean)
            .join(' · ')}
        </div>
      )}
      <FieldErrors errors={form.errors} field={`pvc[${i}]`} />
    </div>
  );
}

/**
 * The editor of tolerations.
 */
export function TolerationEditor(props: {
  form: IFormContext;
}): JSX.Element | null {
  const { form } = props;
  const { trans } = form;
  const effects = form.texts.fields.tolerations.choices ?? {};
  const rows = Private.editing(form.state.tolerations, tolerations =>
    form.set({ tolerations })
  );
  return (
    <RowsFieldset
      form={form}
      name="tolerations"
      addLabel={trans.__('Add toleration')}
      onAdd={() =>
        rows.add({ key: '', operator: 'Equal', value: '', effect: '' })
      }
    >
      {rows.items.map((row, i) => (
        <div className="jp-PyTorchJobForm-row" key={i}>
          <RowInput
            placeholder={trans.__('key')}
            label={trans.__('Key of toleration %1', i + 1)}
            value={row.key}
            onChange={key => rows.update(i, { key })}
          />
          <Choice
            label={trans.__('Operator of toleration %1', i + 1)}
            value={row.operator}
            choices={choicesOf(form.fields, 'tolerations', 'operator')}
            onChange={operator => rows.update(i, { operator })}
          />
          <RowInput
            placeholder={trans.__('value')}
            label={trans.__('Value of toleration %1', i + 1)}
            value={row.value}
            disabled={row.operator === 'Exists'}
            onChange={value => rows.update(i, { value })}
          />
          <Choice
            label={trans.__('Effect of toleration %1', i + 1)}
            value={row.effect}
            choices={choicesOf(form.fields, 'tolerations', 'effect')}
            labels={effects}
            onChange={effect => rows.update(i, { effect })}
          />
          <RemoveButton
            label={trans.__('Remove')}
            onClick={() => rows.remove(i)}
          />
        </div>
      ))}
    </RowsFieldset>
  );
}

/**
 * A text box of a row, named by its label.
 */
function RowInput(props: {
  label: string;
  placeholder: string;
  value: string;
  onChange: (value: string) => void;
  spellCheck?: boolean;
  list?: string;
  disabled?: boolean;
}): JSX.Element {
  return (
    <input
      className="jp-mod-styled"
      type="text"
      list={props.list}
      spellCheck={props.spellCheck}
      placeholder={props.placeholder}
      aria-label={props.label}
      value={props.value}
      disabled={props.disabled}
      onChange={e => props.onChange(e.currentTarget.value)}
    />
  );
}

/**
 * The frame of a list field: its legend, the rows, an "add" button and the
 * errors of the list.
 */
function RowsFieldset(props: {
  form: IFormContext;
  name: string;
  addLabel: string;
  onAdd: () => void;
  children: React.ReactNode;
}): JSX.Element | null {
  const { form, name } = props;
  if (!shown(form, name)) {
    return null;
  }
  return (
    <fieldset
      className="jp-PyTorchJobForm-field jp-PyTorchJobForm-rows"
      data-field={name}
    >
      <legend>{textOf(form, name).label}</legend>
      {props.children}
      <AddButton label={props.addLabel} onClick={props.onAdd} />
      <FieldErrors errors={form.errors} field={name} />
    </fieldset>
  );
}

/**
 * Module-private helpers.
 */
namespace Private {
  /**
   * The edits of a list of rows, each handing the new list over.
   */
  export function editing<T>(items: T[], onChange: (items: T[]) => void) {
    return {
      items,
      update: (i: number, patch: Partial<T>) =>
        onChange(items.map((row, j) => (j === i ? { ...row, ...patch } : row))),
      remove: (i: number) => onChange(items.filter((_, j) => j !== i)),
      add: (row: T) => onChange([...items, row])
    };
  }
}
