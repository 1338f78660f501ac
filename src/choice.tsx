/**
 * `Choice`: a `<select>` among values, each shown by its label (the panel's
 * filters and order, the form's rows).
 *
 * @packageDocumentation
 */

import * as React from 'react';

/**
 * A `<select>` among `choices`, in their order; a value without a label in
 * `labels` shows as is.
 */
export function Choice(props: {
  label: string;
  value: string;
  choices: readonly string[];
  labels?: Readonly<Record<string, string>>;
  onChange: (value: string) => void;
}): JSX.Element {
  return (
    <select
      className="jp-mod-styled"
      aria-label={props.label}
      value={props.value}
      onChange={event => props.onChange(event.currentTarget.value)}
    >
      {props.choices.map(choice => (
        <option key={choice} value={choice}>
          {props.labels?.[choice] ?? choice}
        </option>
      ))}
    </select>
  );
}
