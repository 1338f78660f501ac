/**
 * The job form's state and its conversion to and from the job body.
 *
 * The form keeps every field as the text the user typed; `stateToBody` turns
 * it into the REST body (leaving empty fields to the server's defaults) and
 * `bodyToState` reads a body (a clone, or YAML read back by `render`) into
 * the form, keeping what the form does not know in `extras`.
 *
 * @packageDocumentation
 */

import { TranslationBundle } from '@jupyterlab/translation';

import { translateMessage } from '../servermessages';
import {
  FieldCodec,
  IFieldError,
  IFieldInfo,
  IJobBody,
  IJobKind,
  IPvcMount,
  IToleration
} from '../tokens';

/**
 * One row of a string map (env, labels, …).
 */
export interface IKeyValue {
  /**
   * The key.
   */
  key: string;

  /**
   * The value.
   */
  value: string;
}

/**
 * One PVC mount row.
 */
export interface IPvcRow {
  /**
   * The claim's name.
   */
  claim: string;

  /**
   * The absolute mount path.
   */
  mountPath: string;

  /**
   * Sub-path in the volume.
   */
  subPath: string;

  /**
   * Whether the mount is read-only.
   */
  readOnly: boolean;
}

/**
 * One toleration row.
 */
export interface ITolerationRow {
  /**
   * The taint key.
   */
  key: string;

  /**
   * `Equal` or `Exists`.
   */
  operator: string;

  /**
   * The taint value.
   */
  value: string;

  /**
   * The taint effect, or empty for all.
   */
  effect: string;

  /**
   * Seconds a `NoExecute` taint is tolerated (kept from a clone; not edited here).
   */
  seconds?: number;
}

/**
 * How the job runs its code.
 */
export type EntryMode = 'command' | 'script';

/**
 * What the form keeps of a field: text as typed, key/value rows, rows of
 * several properties, a switch, or what it passes through.
 */
export type FormValue =
  | string
  | boolean
  | IKeyValue[]
  | IPvcRow[]
  | ITolerationRow[]
  | Record<string, unknown>;

/**
 * The state of the job form: every field as typed, keyed by its wire name
 * (`GET config`'s `fields`: its codec says how it is kept), and the settings
 * of the fields the form edits with controls of their own.
 */
export interface IFormState {
  /**
   * Each field of the job body by wire name: text (text, number, quantity,
   * choice, list of names) or key/value rows (map).
   */
  [wire: string]: FormValue;

  /**
   * Job name.
   */
  name: string;

  /**
   * Container image; empty for a TrainJob: its runtime's.
   */
  image: string;

  /**
   * The kind of job object (`PyTorchJob`, `TrainJob`); empty: the server's.
   */
  kind: string;

  /**
   * A TrainJob's runtime; empty: the server's default.
   */
  runtime: string;

  /**
   * A command line, or a script shipped in the job.
   */
  mode: EntryMode;

  /**
   * The command line (shell-like quoting; no shell runs it).
   */
  command: string;

  /**
   * Arguments (of the command or of the script).
   */
  args: string;

  /**
   * The script's source text.
   */
  script: string;

  /**
   * Nodes (pods).
   */
  nodes: string;

  /**
   * Node 0 is the Master; false for a Worker-only job (kept from a clone).
   */
  master: boolean;

  /**
   * Whether `/dev/shm` is a memory-backed volume.
   */
  shmEnabled: boolean;

  /**
   * Size of `/dev/shm`.
   */
  shm: string;

  /**
   * PVC mounts.
   */
  pvc: IPvcRow[];

  /**
   * Tolerations.
   */
  tolerations: ITolerationRow[];

  /**
   * TensorBoard log directory.
   */
  logdir: string;

  /**
   * Where the log archive goes: a directory on a PVC, `off`, or empty (the log
   * directory, if any).
   */
  logArchive: string;

  /**
   * What the form does not know, passed through.
   */
  extras: Record<string, unknown>;
}

/**
 * The codecs of the fields the loops of `defaultFormState`, `stateToBody`
 * and `bodyToState` keep; the others (`rows`, `custom`) have code of their own.
 */
const TABLE_CODECS: ReadonlySet<FieldCodec> = new Set<FieldCodec>([
  'text',
  'number',
  'quantity',
  'choice',
  'list',
  'map'
]);

/**
 * The fields the loops keep, with what the server says of each.
 */
function tableFields(
  fields: Record<string, IFieldInfo>
): [string, IFieldInfo][] {
  return Object.entries(fields).filter(([, info]) =>
    TABLE_CODECS.has(info.form)
  );
}

/**
 * A field's text in the form state (empty for none).
 */
export function stateText(state: IFormState, wire: string): string {
  const value = state[wire];
  return typeof value === 'string' ? value : '';
}

/**
 * A map field's rows in the form state.
 */
export function stateRows(state: IFormState, wire: string): IKeyValue[] {
  const value = state[wire];
  return Array.isArray(value) ? (value as IKeyValue[]) : [];
}

/**
 * The defaults of a new form.
 */
export interface IFormDefaults {
  /**
   * Container image.
   */
  image: string;

  /**
   * `/dev/shm` size; empty for none.
   */
  shm: string;

  /**
   * GPU resource name.
   */
  gpuResource: string;

  /**
   * Default PVC mounts.
   */
  pvc?: IPvcMount[];

  /**
   * Default working directory.
   */
  workdir?: string | null;

  /**
   * Every field's section, default and choices (`GET config`'s `fields`).
   */
  fields: Record<string, IFieldInfo>;

  /**
   * The kinds the backend runs, preferred first, each with the fields it
   * expresses (`GET config`'s `kinds`); absent: the server's default kind.
   */
  kinds?: IJobKind[];
}

/**
 * The body fields the chosen kind expresses; `null` when the backend did not
 * say (every field is then shown).
 */
export function kindFields(
  kinds: readonly IJobKind[] | undefined,
  kind: string
): ReadonlySet<string> | null {
  const found = (kinds ?? []).find(
    k => k.kind.toLowerCase() === kind.toLowerCase()
  );
  return found ? new Set(found.fields) : null;
}

/**
 * The choices of a field (or of its items' property `item`), as the server
 * declares them.
 */
export function choicesOf(
  fields: Record<string, IFieldInfo>,
  name: string,
  item?: string
): string[] {
  const info = fields[name];
  return (item === undefined ? info?.choices : info?.itemChoices?.[item]) ?? [];
}

/**
 * The server's default of a field as the form's text (empty for none).
 */
export function defaultText(
  fields: Record<string, IFieldInfo>,
  name: string
): string {
  return text(fields[name]?.default, '');
}

/**
 * Whether the form shows a setting: every setting that is no body field
 * (`mode`), and the body fields the chosen kind expresses.
 */
export function isShown(
  name: string,
  fields: Record<string, IFieldInfo>,
  supported: ReadonlySet<string> | null
): boolean {
  return supported === null || !(name in fields) || supported.has(name);
}

/**
 * Whether a section has a field the chosen kind expresses (a TrainJob has no
 * Elastic section).
 */
export function sectionShown(
  section: FormSection,
  fields: Record<string, IFieldInfo>,
  supported: ReadonlySet<string> | null
): boolean {
  return (
    supported === null ||
    Object.entries(fields).some(
      ([name, info]) => info.section === section && supported.has(name)
    )
  );
}

/**
 * The kind whose image and process count its runtime decides when unset.
 */
export const TRAINJOB = 'TrainJob';

/**
 * A fresh form.
 */
export function defaultFormState(defaults: IFormDefaults): IFormState {
  const fields = defaults.fields;
  const state: Record<string, FormValue> = {};
  for (const [wire, info] of tableFields(fields)) {
    // A nullable field starts empty: unset, the server's default.
    state[wire] =
      info.form === 'map' ? [] : info.nullable ? '' : defaultText(fields, wire);
  }
  // The backend's preferred kind (the only one where the cluster has one).
  const kind = defaults.kinds?.[0]?.kind ?? '';
  return {
    ...state,
    name: '',
    // A TrainJob runs its runtime's image unless one is given.
    image: kind === TRAINJOB ? '' : defaults.image,
    kind,
    runtime: '',
    mode: 'command',
    command: '',
    args: '',
    script: '',
    workdir: defaults.workdir ?? '',
    nodes: defaultText(fields, 'nodes'),
    gpuResource: defaults.gpuResource,
    shmEnabled: defaults.shm !== '',
    // Turned on with no size: the server's own default size.
    shm: defaults.shm || defaultText(fields, 'shm'),
    master: true,
    pvc: (defaults.pvc ?? []).map(pvcRow),
    tolerations: [],
    logdir: '',
    logArchive: '',
    extras: {}
  };
}

/**
 * The job body of a form state; empty fields are left to the server.
 *
 * @param state - The form.
 * @param fields - Every field's codec (`GET config`'s `fields`).
 * @param supported - The fields the chosen kind expresses (`kindFields`):
 * the others (hidden in the form) are left out; `null`: every field.
 */
export function stateToBody(
  state: IFormState,
  fields: Record<string, IFieldInfo>,
  supported: ReadonlySet<string> | null = null
): IJobBody {
  const body: Record<string, unknown> = {};
  for (const [wire, info] of tableFields(fields)) {
    const value = state[wire];
    if (info.form === 'map') {
      setMap(body, wire, stateRows(state, wire));
    } else if (typeof value === 'string') {
      putText(body, wire, info.form, value);
    }
  }
  body.name = state.name.trim();
  setText(body, 'image', state.image);
  setText(body, 'runtime', state.runtime);
  if (state.mode === 'script') {
    body.script = state.script;
  } else {
    body.command = splitWords(state.command);
  }
  const args = splitWords(state.args);
  if (args.length > 0) {
    body.args = args;
  }
  if (!state.master) {
    body.master = false;
  }
  if (!state.shmEnabled) {
    body.shm = '';
  } else {
    setText(body, 'shm', state.shm);
  }
  const pvc = state.pvc
    .filter(row => row.claim.trim() || row.mountPath.trim() || row.subPath)
    .map(row => {
      const mount: IPvcMount = {
        claim: row.claim.trim(),
        mountPath: row.mountPath.trim()
      };
      if (row.subPath.trim()) {
        mount.subPath = row.subPath.trim();
      }
      if (row.readOnly) {
        mount.readOnly = true;
      }
      return mount;
    });
  if (pvc.length > 0) {
    body.pvc = pvc;
  }
  const tolerations = state.tolerations
    .filter(row => row.key.trim() || row.value.trim() || row.effect)
    .map(row => {
      const toleration: IToleration = { key: row.key.trim() };
      if (row.operator) {
        toleration.operator = row.operator;
      }
      if (row.value.trim()) {
        toleration.value = row.value.trim();
      }
      if (row.effect) {
        toleration.effect = row.effect;
      }
      if (row.seconds !== undefined && row.effect === 'NoExecute') {
        toleration.tolerationSeconds = row.seconds;
      }
      return toleration;
    });
  if (tolerations.length > 0) {
    body.tolerations = tolerations;
  }
  if (Object.keys(state.extras).length > 0) {
    body.extras = state.extras;
  }
  if (supported) {
    for (const key of Object.keys(body)) {
      if (key !== 'kind' && !supported.has(key)) {
        delete body[key];
      }
    }
  }
  return body as IJobBody;
}

/**
 * The form state of a job body (a clone, or YAML read back).
 *
 * @param body - The job body, usually with every default spelled out.
 * @param base - The state whose values fill what the body leaves out.
 * @param fields - Every field's codec (`GET config`'s `fields`).
 */
export function bodyToState(
  body: IJobBody,
  base: IFormState,
  fields: Record<string, IFieldInfo>
): IFormState {
  const values = body as Record<string, unknown>;
  const state: Record<string, FormValue> = {};
  for (const [wire, info] of tableFields(fields)) {
    const value = values[wire];
    if (info.form === 'map') {
      state[wire] = rows(value as Record<string, string> | undefined);
    } else if (info.form === 'list') {
      state[wire] = Array.isArray(value) ? value.join(' ') : '';
    } else {
      // What the body leaves out: unset for a nullable field, else the form's.
      state[wire] = text(value, info.nullable ? '' : stateText(base, wire));
    }
  }
  const script = typeof body.script === 'string' ? body.script : null;
  const shm = body.shm === undefined ? undefined : (body.shm ?? '');
  return {
    ...state,
    name: body.name ?? base.name,
    // A TrainJob without an image runs its runtime's: keep it unset.
    image: body.image ?? (body.kind === TRAINJOB ? '' : base.image),
    kind: body.kind ?? base.kind,
    runtime: body.runtime ?? '',
    mode: script !== null ? 'script' : 'command',
    command: script !== null ? base.command : joinWords(body.command ?? []),
    args: joinWords(body.args ?? []),
    script: script ?? base.script,
    nodes: text(body.nodes, base.nodes),
    shmEnabled: shm === undefined ? base.shmEnabled : shm !== '',
    shm: shm ? shm : base.shm,
    master: body.master ?? true,
    pvc: (body.pvc ?? []).map(pvcRow),
    tolerations: (body.tolerations ?? []).map(t => ({
      key: t.key ?? '',
      operator: t.operator ?? 'Equal',
      value: t.value ?? '',
      effect: t.effect ?? '',
      ...(t.tolerationSeconds !== undefined && t.tolerationSeconds !== null
        ? { seconds: t.tolerationSeconds }
        : {})
    })),
    logdir: body.logdir ?? '',
    logArchive: body.logArchive ?? '',
    extras: { ...(body.extras ?? {}) }
  };
}

/**
 * Split a command line into words, with shell-like quoting (`'…'`, `"…"`,
 * backslash escapes); no shell ever runs it.
 */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") {
        quote = null;
      } else {
        word += c;
      }
    } else if (quote === '"') {
      if (c === '"') {
        quote = null;
      } else if (
        c === '\\' &&
        i + 1 < line.length &&
        '"\\$`'.includes(line[i + 1])
      ) {
        word += line[++i];
      } else {
        word += c;
      }
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) {
        words.push(word);
        word = '';
        inWord = false;
      }
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) {
    words.push(word);
  }
  return words;
}

/**
 * Join words into a command line that `splitWords` splits back the same.
 */
export function joinWords(words: readonly string[]): string {
  return words
    .map(word =>
      word !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)
        ? word
        : `'${word.replace(/'/g, "'\\''")}'`
    )
    .join(' ');
}

/**
 * A fresh, valid job name derived from a script or command name.
 *
 * @param hint - A file name or command, e.g. `train_ddp.py`.
 * @param random - A source of randomness in [0, 1), for tests.
 */
export function suggestName(
  hint: string | null | undefined,
  random: () => number = Math.random
): string {
  let base = (hint ?? '').split('/').pop() ?? '';
  base = base
    .replace(/\.(py|sh|ipynb)$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let suffix = '';
  for (let i = 0; i < 5; i++) {
    suffix += alphabet[Math.floor(random() * alphabet.length)];
  }
  return `${base || 'ptjob'}-${suffix}`;
}

/**
 * The form section a field belongs to, to open it when the field is invalid.
 */
export function sectionOf(
  field: string,
  fields: Record<string, IFieldInfo>
): FormSection {
  const section = fields[field.split(/[[.]/)[0]]?.section;
  return FORM_SECTIONS.includes(section as FormSection)
    ? (section as FormSection)
    : 'advanced';
}

/**
 * The sections of the form.
 */
export type FormSection =
  'basics' | 'resources' | 'storage' | 'elastic' | 'advanced';

/**
 * The sections, in the form's order.
 */
export const FORM_SECTIONS: readonly FormSection[] = [
  'basics',
  'resources',
  'storage',
  'elastic',
  'advanced'
];

/**
 * Field errors by field name, in the user's language; a field with several
 * errors keeps them all.
 */
export function errorsByField(
  errors: readonly IFieldError[],
  trans: TranslationBundle
): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const error of errors) {
    const list = map.get(error.field) ?? [];
    list.push(translateMessage(error, trans));
    map.set(error.field, list);
  }
  return map;
}

/**
 * The errors of a field and of everything below it (`env` covers `env[FOO]`).
 */
export function errorsUnder(
  errors: Map<string, string[]>,
  field: string
): string[] {
  const found: string[] = [];
  for (const [key, messages] of errors) {
    if (
      key === field ||
      key.startsWith(field + '[') ||
      key.startsWith(field + '.')
    ) {
      for (const message of messages) {
        found.push(key === field ? message : `${key}: ${message}`);
      }
    }
  }
  return found;
}

/**
 * The paths of what `extras` keeps (`spec.runPolicy.schedulingPolicy`), each
 * down to its first value that is no object with keys.
 */
export function extrasPaths(extras: Record<string, unknown>): string[] {
  const paths: string[] = [];
  const walk = (value: unknown, path: string): void => {
    const plain =
      value !== null && typeof value === 'object' && !Array.isArray(value);
    const keys = plain ? Object.keys(value as object) : [];
    if (keys.length === 0) {
      paths.push(path);
      return;
    }
    for (const key of keys) {
      walk(
        (value as Record<string, unknown>)[key],
        path ? `${path}.${key}` : key
      );
    }
  };
  for (const [key, value] of Object.entries(extras)) {
    walk(value, key);
  }
  return paths;
}

/**
 * Whether a job writes to DataLoader workers that need `/dev/shm`: a
 * `num_workers` above 0 in the script or the command.
 */
export function usesDataLoaderWorkers(state: IFormState): boolean {
  const code = state.mode === 'script' ? state.script : '';
  const text = `${code}\n${state.command} ${state.args}`;
  return /num[_-]workers\s*[=:\s]\s*[1-9]/.test(text);
}

/**
 * Module-private helpers.
 */
function setText(
  body: Record<string, unknown>,
  key: string,
  value: string
): void {
  const trimmed = value.trim();
  if (trimmed) {
    body[key] = trimmed;
  }
}

/**
 * A text of the form as its codec sends it: a number as a number (anything
 * else as typed: the server names the problem), a list of names split at
 * spaces and commas, the rest trimmed; empty: left out.
 */
function putText(
  body: Record<string, unknown>,
  key: string,
  codec: FieldCodec,
  value: string
): void {
  const trimmed = value.trim();
  if (!trimmed) {
    return;
  }
  if (codec === 'number') {
    body[key] = /^[0-9]+$/.test(trimmed) ? Number(trimmed) : trimmed;
  } else if (codec === 'list') {
    body[key] = trimmed.split(/[\s,]+/).filter(Boolean);
  } else {
    body[key] = trimmed;
  }
}

function setMap(
  body: Record<string, unknown>,
  key: string,
  rows: IKeyValue[]
): void {
  const map: Record<string, string> = {};
  for (const row of rows) {
    if (row.key.trim()) {
      map[row.key.trim()] = row.value;
    }
  }
  if (Object.keys(map).length > 0) {
    body[key] = map;
  }
}

function rows(map: Record<string, string> | undefined): IKeyValue[] {
  return Object.entries(map ?? {}).map(([key, value]) => ({ key, value }));
}

function text(value: unknown, fallback: string): string {
  return value === null || value === undefined ? fallback : String(value);
}

function pvcRow(mount: IPvcMount): IPvcRow {
  return {
    claim: mount.claim ?? '',
    mountPath: mount.mountPath ?? '',
    subPath: mount.subPath ?? '',
    readOnly: !!mount.readOnly
  };
}
