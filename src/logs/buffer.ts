/**
 * The log buffer: every replica's lines in arrival order, per-replica views,
 * resume offsets and search, compact enough for millions of lines.
 *
 * @packageDocumentation
 */

import { ILogChunk } from '../tokens';

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
   * The text of line `i`.
   */
  text(i: number): string {
    return this._lines[i];
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
      this._generation++;
      this._epoch++;
    }
    return index;
  }

  /**
   * Append a chunk of the stream.
   *
   * Lines are split on newlines; a trailing piece without a newline waits for
   * the rest of its line. ANSI colour codes are removed, and of a line
   * rewritten with carriage returns (progress bars) only the last state is kept.
   *
   * @returns The number of lines added.
   */
  append(chunk: ILogChunk): number {
    const index = this.addReplica(chunk.replica);
    const previousOffset = this._offsets[chunk.replica];
    if (previousOffset === undefined || chunk.offset > previousOffset) {
      this._offsets[chunk.replica] = chunk.offset;
    }
    const text = (this._pending.get(chunk.replica) ?? '') + chunk.text;
    const parts = text.split('\n');
    const rest = parts.pop() ?? '';
    if (rest) {
      this._pending.set(chunk.replica, rest);
    } else {
      this._pending.delete(chunk.replica);
    }
    const own = this._byReplica[index];
    for (const part of parts) {
      own.push(this._lines.length);
      this._owner.push(index);
      this._lines.push(Private.clean(part));
    }
    if (parts.length > 0) {
      this._generation++;
    }
    return parts.length;
  }

  /**
   * Forget every line and offset.
   */
  clear(): void {
    this._lines = [];
    this._owner = new IndexArray();
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
        lineAt: (i: number) => i
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
      lineAt: (i: number) => resolve()!.get(i)
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
    const smart = query !== query.toLowerCase();
    const needle = smart ? query : query.toLowerCase();
    for (let i = start; i < view.length; i++) {
      const line = this._lines[view.lineAt(i)];
      const hay = smart ? line : line.toLowerCase();
      if (hay.indexOf(needle) !== -1) {
        found.push(i);
      }
    }
    return found;
  }

  /**
   * The text of a view, one line per line, prefixed with the replica when
   * `prefix` (for downloads).
   */
  toText(view: ILogView, prefix: boolean): string {
    const width = this.prefixWidth;
    const out: string[] = new Array(view.length);
    for (let i = 0; i < view.length; i++) {
      const line = view.lineAt(i);
      out[i] = prefix
        ? `${this.replicaOf(line).padEnd(width)} | ${this._lines[line]}`
        : this._lines[line];
    }
    return out.join('\n') + (view.length > 0 ? '\n' : '');
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
  // eslint-disable-next-line no-control-regex
  const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07/g;

  /**
   * A line without ANSI codes, showing only its last carriage-return rewrite.
   */
  export function clean(line: string): string {
    let text = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (text.indexOf('\x1b') !== -1) {
      text = text.replace(ANSI, '');
    }
    const cr = text.lastIndexOf('\r');
    return cr === -1 ? text : text.slice(cr + 1);
  }
}
