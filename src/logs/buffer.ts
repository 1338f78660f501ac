/**
 * The log buffer: every replica's lines in arrival order, per-replica views,
 * resume offsets and search, compact enough for millions of lines.
 *
 * Lines are kept as a terminal shows them: a redraw line (the server's `\r`
 * + text, see `ILogChunk`) replaces its replica's previous line where that
 * line stands, so a progress bar is one line in its latest state. Lines that
 * start a Python traceback or say `Error`/`ERROR` are flagged as problems.
 *
 * @packageDocumentation
 */

import { ILogChunk } from '../tokens';
import { stripAnsi } from './ansi';

/**
 * A line's flags (`LogBuffer.flags`): it says something went wrong.
 */
export const PROBLEM = 1;

/**
 * A line's flags: it starts a Python traceback (also a `PROBLEM`).
 */
export const TRACEBACK = 2;

/**
 * A view of a buffer: all its lines, or one replica's.
 */
export interface ILogView {
  /**
   * The number of lines in the view.
   */
  readonly length: number;

  /**
   * The buffer index of the view's line `i`.
   */
  lineAt(i: number): number;

  /**
   * The view position of buffer line `line`, or -1 when it is not in the view.
   */
  positionOf(line: number): number;
}

/**
 * Every line of a job's log, with the replica of each.
 */
export class LogBuffer {
  /**
   * The number of lines.
   */
  get length(): number {
    return this._lines.length;
  }

  /**
   * The replicas, in order of first appearance (sorted master first when known).
   */
  get replicas(): readonly string[] {
    return this._replicas;
  }

  /**
   * Increases with every change, so that views know to re-render.
   */
  get generation(): number {
    return this._generation;
  }

  /**
   * The offset after the last chunk of each replica: the `since` of a resumed stream.
   */
  get offsets(): Record<string, number> {
    return { ...this._offsets };
  }

  /**
   * The text of line `i`, its ANSI codes included.
   */
  text(i: number): string {
    return this._lines[i];
  }

  /**
   * The text of line `i` as search sees it: without ANSI codes.
   */
  plainText(i: number): string {
    return stripAnsi(this._lines[i]);
  }

  /**
   * The time of line `i` in seconds since the epoch (of its latest redraw),
   * or null when the stream gave none.
   */
  time(i: number): number | null {
    const when = this._times?.[i];
    return when === undefined || Number.isNaN(when) ? null : when;
  }

  /**
   * The flags of line `i`: `PROBLEM`, `TRACEBACK`, or 0.
   */
  flags(i: number): number {
    return this._flags.get(i);
  }

  /**
   * The number of problem lines, of one replica or (`null`) of all.
   */
  problemCount(replica: string | null): number {
    if (replica === null) {
      return this._problems.reduce((sum, count) => sum + count, 0);
    }
    const index = this._replicaIndex.get(replica);
    return index === undefined ? 0 : this._problems[index];
  }

  /**
   * The view position of the next problem line after `from` (or, with `-1`,
   * before it), wrapping around; -1 when the view has none.
   *
   * @param only - The flag the line must have (`TRACEBACK`: tracebacks only).
   */
  nextProblem(
    view: ILogView,
    from: number,
    direction: 1 | -1,
    only = PROBLEM
  ): number {
    const count = view.length;
    for (let k = 1; k <= count; k++) {
      const position = (((from + direction * k) % count) + count) % count;
      if (this._flags.get(view.lineAt(position)) & only) {
        return position;
      }
    }
    return -1;
  }

  /**
   * The replica index of line `i` (into `replicas`).
   */
  replicaIndex(i: number): number {
    return this._owner.get(i);
  }

  /**
   * The replica name of line `i`.
   */
  replicaOf(i: number): string {
    return this._replicas[this._owner.get(i)];
  }

  /**
   * Add a replica before any of its lines arrive (so its tab shows).
   *
   * @returns Its index.
   */
  addReplica(name: string): number {
    let index = this._replicaIndex.get(name);
    if (index === undefined) {
      index = this._replicas.length;
      this._replicas.push(name);
      this._replicaIndex.set(name, index);
      this._byReplica.push(new IndexArray());
      this._last.push(-1);
      this._problems.push(0);
      this._generation++;
      this._epoch++;
    }
    return index;
  }

  /**
   * Append a chunk of the stream: one replica's lines, or several replicas'
   * merged in time order (`owners` names each line's replica).
   *
   * Lines are split on newlines; a trailing piece without a newline waits for
   * the rest of its line. A redraw line (`\r` first) replaces its replica's
   * previous line; with none, it is a line of its own. ANSI codes are kept.
   * A `stamped` chunk's lines lose their stamp first.
   *
   * @returns The number of lines added (redraws add none).
   */
  append(chunk: ILogChunk): number {
    const merged = chunk.owners !== undefined && chunk.replicas !== undefined;
    const names = merged ? chunk.replicas! : [chunk.replica];
    const offsets = merged ? chunk.offsets! : { [chunk.replica]: chunk.offset };
    const indices = names.map(name => this.addReplica(name));
    for (const [name, offset] of Object.entries(offsets)) {
      const previousOffset = this._offsets[name];
      if (previousOffset === undefined || offset > previousOffset) {
        this._offsets[name] = offset;
      }
    }
    const parts = chunk.text.split('\n');
    let rest = parts.pop() ?? '';
    if (chunk.stamped) {
      // The server leaves each line's stamp on (cheaper there): the line is
      // what follows the stamp's space, a stamp alone an empty line.
      for (let k = 0; k < parts.length; k++) {
        parts[k] = Private.unstamp(parts[k]);
      }
      rest = rest && Private.unstamp(rest);
    }
    // Line k's replica: the chunk's, or the one `owners` names ("0" + index).
    const owners = merged ? chunk.owners! : '';
    const ownerOf = (k: number): number =>
      merged ? owners.charCodeAt(Math.min(k, owners.length - 1)) - 48 : 0;
    if (this._pending.size > 0) {
      // Each replica's unfinished line goes before its first line here.
      const seen = new Set<number>();
      for (let k = 0; k < parts.length && seen.size < names.length; k++) {
        const owner = ownerOf(k);
        if (!seen.has(owner)) {
          seen.add(owner);
          const before = this._pending.get(names[owner]);
          if (before !== undefined) {
            parts[k] = before + parts[k];
            this._pending.delete(names[owner]);
          }
        }
      }
    }
    if (rest) {
      const name = names[ownerOf(parts.length)];
      this._pending.set(name, (this._pending.get(name) ?? '') + rest);
    }
    const times = chunk.times;
    if (times && this._times === null) {
      // Kept from the first times on: a slot per line, none before.
      this._times = new Array<number>(this._lines.length).fill(NaN);
    }
    let added = 0;
    for (let k = 0; k < parts.length; k++) {
      added += this._appendLine(
        indices[ownerOf(k)],
        parts[k],
        times?.[k] ?? NaN
      );
    }
    if (parts.length > 0) {
      this._generation++;
    }
    return added;
  }

  /**
   * Forget every line and offset.
   */
  clear(): void {
    this._lines = [];
    this._owner = new IndexArray();
    this._flags = new IndexArray();
    this._times = null;
    this._raw = [];
    this._rawOwner = new IndexArray();
    this._last = [];
    this._problems = [];
    this._redrawn = [];
    this._redrawnOverflow = false;
    this._replicas = [];
    this._replicaIndex.clear();
    this._byReplica = [];
    this._offsets = {};
    this._pending.clear();
    this._generation++;
    this._epoch++;
  }

  /**
   * A view of every line, or of one replica's.
   *
   * @param replica - The replica; `null` for all of them merged.
   */
  view(replica: string | null): ILogView {
    // Views are live: they follow appends, and a `clear()` too.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const buffer = this;
    if (replica === null) {
      return {
        get length() {
          return buffer._lines.length;
        },
        lineAt: (i: number) => i,
        positionOf: (line: number) =>
          line >= 0 && line < buffer._lines.length ? line : -1
      };
    }
    let epoch = -1;
    let own: IndexArray | undefined;
    const resolve = (): IndexArray | undefined => {
      if (epoch !== buffer._epoch || own === undefined) {
        epoch = buffer._epoch;
        const index = buffer._replicaIndex.get(replica);
        own = index === undefined ? undefined : buffer._byReplica[index];
      }
      return own;
    };
    return {
      get length() {
        return resolve()?.length ?? 0;
      },
      lineAt: (i: number) => resolve()!.get(i),
      positionOf: (line: number) => resolve()?.indexOf(line) ?? -1
    };
  }

  /**
   * The positions in `view` of the lines containing `query`, from `start` on.
   *
   * @param view - The view to search.
   * @param query - The text to find; case-insensitive unless it has capitals.
   * @param start - The first view position to look at.
   */
  search(view: ILogView, query: string, start = 0): number[] {
    const found: number[] = [];
    if (!query) {
      return found;
    }
    const matches = Private.matcher(query);
    for (let i = start; i < view.length; i++) {
      if (matches(this.plainText(view.lineAt(i)))) {
        found.push(i);
      }
    }
    return found;
  }

  /**
   * Whether line `i` contains `query` (as `search` matches).
   */
  lineMatches(i: number, query: string): boolean {
    return query !== '' && Private.matcher(query)(this.plainText(i));
  }

  /**
   * The lines redrawn since the last call (their text changed in place), or
   * `null` when too many were to list (then every line may have changed).
   */
  takeRedrawn(): number[] | null {
    const redrawn = this._redrawnOverflow ? null : this._redrawn;
    this._redrawn = [];
    this._redrawnOverflow = false;
    return redrawn;
  }

  /**
   * The text of a view, one line per line, prefixed with the replica when
   * `prefix` (for downloads): as shown, without ANSI codes; or, when `raw`,
   * as the program wrote it: colours kept and each redraw after a `\r` on
   * the line it redraws (a redraw that follows another replica's line starts
   * a line of its own). With `times`, as shown: each line after its time
   * (ISO 8601, UTC).
   */
  toText(view: ILogView, prefix: boolean, raw = false, times = false): string {
    const width = this.prefixWidth;
    const tag = (index: number): string =>
      prefix ? `${this._replicas[index].padEnd(width)} | ` : '';
    if (!raw) {
      const out: string[] = new Array(view.length);
      for (let i = 0; i < view.length; i++) {
        const line = view.lineAt(i);
        const when = times ? this.time(line) : null;
        out[i] =
          (when === null ? '' : new Date(when * 1000).toISOString() + ' ') +
          tag(this._owner.get(line)) +
          this.plainText(line);
      }
      return out.join('\n') + (view.length > 0 ? '\n' : '');
    }
    const shown = new Set<number>();
    for (let i = 0; i < view.length; i++) {
      shown.add(this._owner.get(view.lineAt(i)));
    }
    const out: string[] = [];
    let previous = -1;
    for (let i = 0; i < this._raw.length; i++) {
      const owner = this._rawOwner.get(i);
      if (!shown.has(owner)) {
        continue;
      }
      const text = this._raw[i];
      if (text.startsWith('\r') && owner === previous) {
        out.push('\r', tag(owner), text.slice(1));
      } else {
        out.push(
          out.length > 0 ? '\n' : '',
          tag(owner),
          text.replace(/^\r/, '')
        );
      }
      previous = owner;
    }
    return out.join('') + (out.length > 0 ? '\n' : '');
  }

  /**
   * The width of the longest replica name, to align prefixes.
   */
  get prefixWidth(): number {
    let width = 0;
    for (const name of this._replicas) {
      width = Math.max(width, name.length);
    }
    return width;
  }

  private _lines: string[] = [];
  private _owner = new IndexArray();
  private _flags = new IndexArray();
  // Each line's time (NaN: none), once a chunk brought times (all numbers:
  // V8 packs them as doubles, as a Float64Array would).
  private _times: number[] | null = null;
  // Every line as it came (redraws too), for the raw download.
  private _raw: string[] = [];
  private _rawOwner = new IndexArray();
  /**
   * One whole line of replica `index` (its newline gone): a line of its own,
   * or a redraw of the replica's last line (`when`: its time, NaN for none,
   * a redraw's replacing the line's). Returns the lines added (0 or 1).
   */
  private _appendLine(index: number, part: string, when: number): number {
    const raw = part.endsWith('\r') ? part.slice(0, -1) : part;
    this._raw.push(raw);
    this._rawOwner.push(index);
    const redraw = raw.startsWith('\r');
    // A server older than the redraw-line contract sends a whole line with
    // its redraws inside: a terminal shows the part after the last \r.
    const line = raw.slice(raw.lastIndexOf('\r') + 1);
    const flags = Private.classify(line);
    const last = this._last[index];
    if (redraw && last !== -1) {
      this._problems[index] +=
        (flags & PROBLEM) - (this._flags.get(last) & PROBLEM);
      this._lines[last] = line;
      this._flags.set(last, flags);
      if (this._times) {
        this._times[last] = when;
      }
      if (this._redrawn.length < Private.MAX_REDRAWN) {
        this._redrawn.push(last);
      } else {
        this._redrawnOverflow = true;
      }
      return 0;
    }
    this._last[index] = this._lines.length;
    this._byReplica[index].push(this._lines.length);
    this._owner.push(index);
    this._flags.push(flags);
    this._times?.push(when);
    this._problems[index] += flags & PROBLEM;
    this._lines.push(line);
    return 1;
  }

  // Per replica: the buffer index of its last line (what a redraw replaces).
  private _last: number[] = [];
  private _problems: number[] = [];
  // Lines redrawn since `takeRedrawn` (a search re-checks them).
  private _redrawn: number[] = [];
  private _redrawnOverflow = false;
  private _replicas: string[] = [];
  private _replicaIndex = new Map<string, number>();
  private _byReplica: IndexArray[] = [];
  private _offsets: Record<string, number> = {};
  private _pending = new Map<string, string>();
  private _generation = 0;
  private _epoch = 0;
}

/**
 * A growable array of 32-bit integers.
 */
export class IndexArray {
  /**
   * The number of items.
   */
  get length(): number {
    return this._length;
  }

  /**
   * Item `i`.
   */
  get(i: number): number {
    return this._data[i];
  }

  /**
   * The position of `value` in the (ascending) items, or -1.
   */
  indexOf(value: number): number {
    let lo = 0;
    let hi = this._length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const item = this._data[mid];
      if (item === value) {
        return mid;
      }
      if (item < value) {
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return -1;
  }

  /**
   * Replace item `i`.
   */
  set(i: number, value: number): void {
    this._data[i] = value;
  }

  /**
   * Append an item.
   */
  push(value: number): void {
    if (this._length === this._data.length) {
      const grown = new Int32Array(Math.max(1024, this._data.length * 2));
      grown.set(this._data);
      this._data = grown;
    }
    this._data[this._length++] = value;
  }

  private _data = new Int32Array(0);
  private _length = 0;
}

/**
 * Module-private helpers.
 */
namespace Private {
  /**
   * Redrawn lines listed for a search between two refreshes; past this,
   * the search is done again.
   */
  export const MAX_REDRAWN = 4096;

  /**
   * A test of a line against a query: case-insensitive unless it has capitals.
   */
  export function matcher(query: string): (text: string) => boolean {
    const smart = query !== query.toLowerCase();
    const needle = smart ? query : query.toLowerCase();
    return smart
      ? text => text.indexOf(needle) !== -1
      : text => text.toLowerCase().indexOf(needle) !== -1;
  }

  /**
   * A stamped line without its stamp: what follows the first space, or the
   * empty string when it has none (a stamp alone).
   */
  export function unstamp(line: string): string {
    const space = line.indexOf(' ');
    return space === -1 ? '' : line.slice(space + 1);
  }

  const TRACEBACK_TEXT = /Traceback \(most recent call last\):/;
  // `RuntimeError: …`, `ERROR: …`; not `errors`, `ErrorHandler` or `TERRORS`.
  const ERROR_TEXT = /Error\b|\bERROR\b/;

  /**
   * The flags of a line.
   */
  export function classify(line: string): number {
    const plain = stripAnsi(line);
    // Most lines say neither word: two fast scans, no regular expression.
    if (
      plain.indexOf('rror') === -1 &&
      plain.indexOf('ERROR') === -1 &&
      plain.indexOf('Traceback') === -1
    ) {
      return 0;
    }
    if (TRACEBACK_TEXT.test(plain)) {
      return PROBLEM | TRACEBACK;
    }
    return ERROR_TEXT.test(plain) ? PROBLEM : 0;
  }
}
