/**
 * How the comparison's cells read (pure): a command shows only the tokens
 * that differ between the jobs, volumes and tolerations as the flags write
 * them, never raw JSON.
 *
 * @packageDocumentation
 */

/**
 * The fields whose values are command lines: their cells show only the
 * tokens that differ.
 */
export const COMMAND_FIELDS = ['command', 'args'];

/**
 * What stands for the tokens every job shares.
 */
export const ELLIPSIS = '…';

function isTokens(value: unknown): value is string[] {
  return (
    Array.isArray(value) && value.every(token => typeof token === 'string')
  );
}

/**
 * Each job's command line cut to the tokens that differ: the tokens every
 * job shares at the start and at the end become `…`. Null for a job without
 * one; the whole line when the values are not all token lists.
 */
export function differingTokens(values: unknown[]): Array<string | null> {
  const lists = values.filter(value => value !== null && value !== undefined);
  if (lists.length < 2 || !lists.every(isTokens)) {
    return values.map(value =>
      value === null || value === undefined ? null : formatValue(value)
    );
  }
  const shortest = Math.min(...lists.map(list => list.length));
  let prefix = 0;
  while (
    prefix < shortest &&
    lists.every(list => list[prefix] === lists[0][prefix])
  ) {
    prefix++;
  }
  let suffix = 0;
  while (
    suffix < shortest - prefix &&
    lists.every(
      list =>
        list[list.length - 1 - suffix] ===
        lists[0][lists[0].length - 1 - suffix]
    )
  ) {
    suffix++;
  }
  return values.map(value => {
    if (!isTokens(value)) {
      return null;
    }
    const middle = value.slice(prefix, value.length - suffix);
    return [
      ...(prefix > 0 ? [ELLIPSIS] : []),
      ...middle,
      ...(suffix > 0 ? [ELLIPSIS] : [])
    ].join(' ');
  });
}

/**
 * One object as the CLI's flags write it: a volume `claim:/mount`, a
 * toleration `key=value:Effect`, anything else `key=value` pairs.
 */
export function formatItem(item: unknown): string {
  if (item === null || typeof item !== 'object') {
    return String(item);
  }
  const record = item as Record<string, unknown>;
  if (
    typeof record.claim === 'string' &&
    typeof record.mountPath === 'string'
  ) {
    const sub = record.subPath ? ` (${String(record.subPath)})` : '';
    const ro = record.readOnly ? ' ro' : '';
    return `${record.claim}:${record.mountPath}${sub}${ro}`;
  }
  if ('effect' in record || 'operator' in record) {
    const key = String(record.key ?? '');
    const value = record.value ? `=${String(record.value)}` : '';
    const effect = record.effect ? `:${String(record.effect)}` : '';
    return `${key}${value}${effect}` || String(record.operator ?? '');
  }
  return Object.entries(record)
    .map(
      ([key, value]) =>
        `${key}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`
    )
    .join(' ');
}

/**
 * A value as a cell reads: lists of words joined by spaces, lists of objects
 * one per line, `—` for none.
 */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) {
    return '—';
  }
  if (Array.isArray(value)) {
    return value.every(item => item === null || typeof item !== 'object')
      ? value.map(String).join(' ')
      : value.map(formatItem).join('\n');
  }
  if (typeof value === 'object') {
    return formatItem(value);
  }
  return String(value);
}

/**
 * The cells of one differing field: command lines cut to what differs,
 * anything else as `formatValue` reads it.
 */
export function parameterCells(field: string, values: unknown[]): string[] {
  if (COMMAND_FIELDS.includes(field)) {
    return differingTokens(values).map(cell => cell ?? '—');
  }
  return values.map(formatValue);
}
