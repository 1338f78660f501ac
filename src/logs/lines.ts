/**
 * A virtualised view of a `LogBuffer`: only the visible rows are in the DOM,
 * so a million lines open and scroll as fast as ten. Long lines scroll
 * sideways, or wrap (`wrap`: rows as tall as their text, the scrollbar then
 * mapping to lines); `onlyMatching` shows the search's matching lines alone
 * (a view over the matches: still no row per line).
 *
 * @packageDocumentation
 */

import { Message } from '@lumino/messaging';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { hasEscapes, renderColoured } from './ansi';
import { ILogView, LogBuffer, PROBLEM, TRACEBACK } from './buffer';

/**
 * The height of one row, in pixels (kept in sync with `style/logs.css`).
 */
export const LINE_HEIGHT = 18;

/**
 * Browsers cap an element's height (Chrome near 33.5 M px); past this the
 * scrollbar maps to lines proportionally instead of one row per 18 px.
 */
export const MAX_SCROLL_HEIGHT = 10_000_000;

/**
 * The number of replica colours in the stylesheet.
 */
export const REPLICA_COLOURS = 8;

/**
 * The rows of a log, virtualised.
 */
export class LogLines extends Widget {
  /**
   * Construct the view of a buffer.
   */
  constructor(options: LogLines.IOptions) {
    super();
    this.buffer = options.buffer;
    this.addClass('jp-PyTorchJobLogs-lines');
    this.node.tabIndex = 0;
    this.node.setAttribute('role', 'log');
    this.node.setAttribute('aria-live', 'off');
    if (options.label) {
      this.node.setAttribute('aria-label', options.label);
    }
    this._sizer = document.createElement('div');
    this._sizer.className = 'jp-PyTorchJobLogs-sizer';
    this._rows = document.createElement('div');
    this._rows.className = 'jp-PyTorchJobLogs-rows';
    this.node.appendChild(this._sizer);
    this.node.appendChild(this._rows);
    this._view = this.buffer.view(null);
    this._matchView = new Private.MatchView(
      () => this._view,
      () => this._matches
    );
  }

  /**
   * Whether long lines wrap (else they scroll sideways).
   */
  get wrap(): boolean {
    return this._wrap;
  }
  set wrap(value: boolean) {
    if (value === this._wrap) {
      return;
    }
    this._wrap = value;
    this.node.classList.toggle('jp-mod-wrap', value);
    this._rows.style.height = '';
    this._rows.style.transform = '';
    this._revealCurrent();
  }

  /**
   * Whether each line shows its time (where the buffer has one).
   */
  get timestamps(): boolean {
    return this._timestamps;
  }
  set timestamps(value: boolean) {
    if (value !== this._timestamps) {
      this._timestamps = value;
      this._invalidate();
    }
  }

  /**
   * Whether only the lines matching the query are shown (all of them while
   * there is no query).
   */
  get onlyMatching(): boolean {
    return this._onlyMatching;
  }
  set onlyMatching(value: boolean) {
    if (value === this._onlyMatching) {
      return;
    }
    this._onlyMatching = value;
    this._problem = -1;
    this._revealCurrent();
  }

  /**
   * The number of lines shown: `lineCount`, or the matching ones alone.
   */
  get shownCount(): number {
    return this._shown().length;
  }

  /**
   * The buffer shown.
   */
  readonly buffer: LogBuffer;

  /**
   * The replica shown, or `null` for all of them merged with prefixes.
   */
  get replica(): string | null {
    return this._replica;
  }
  set replica(value: string | null) {
    if (value === this._replica) {
      return;
    }
    this._replica = value;
    this._view = this.buffer.view(value);
    this._problem = -1;
    this._recomputeMatches();
    this._invalidate();
  }

  /**
   * Whether the view sticks to the end as lines arrive.
   */
  get follow(): boolean {
    return this._follow;
  }
  set follow(value: boolean) {
    if (value === this._follow) {
      return;
    }
    this._follow = value;
    this._followChanged.emit(value);
    if (value) {
      this.scheduleRender();
    }
  }

  /**
   * Emitted when `follow` changes (also when scrolling turns it off or on).
   */
  get followChanged(): ISignal<this, boolean> {
    return this._followChanged;
  }

  /**
   * The number of lines in the view.
   */
  get lineCount(): number {
    return this._view.length;
  }

  /**
   * The number of rows in the DOM.
   */
  get renderedRows(): number {
    return this._rows.childElementCount;
  }

  /**
   * The search query.
   */
  get query(): string {
    return this._query;
  }

  /**
   * The view positions of the lines that match the query.
   */
  get matches(): readonly number[] {
    return this._matches;
  }

  /**
   * The index in `matches` of the current match, or -1.
   */
  get currentMatch(): number {
    return this._current;
  }

  /**
   * Emitted when the matches or the current match change.
   */
  get matchesChanged(): ISignal<this, void> {
    return this._matchesChanged;
  }

  /**
   * Highlight the lines containing `query` and go to the first one.
   */
  setQuery(query: string): void {
    if (query === this._query) {
      return;
    }
    this._query = query;
    if (this._onlyMatching) {
      this._problem = -1; // a position among the lines shown, which change
    }
    this._recomputeMatches();
    if (this._matches.length > 0) {
      this._current = 0;
      this._reveal(this._shownPosition(this._matches[0]));
    }
    this._invalidate();
  }

  /**
   * Go to the next (or, with `-1`, the previous) match.
   */
  step(direction: 1 | -1): void {
    const count = this._matches.length;
    if (count === 0) {
      return;
    }
    this._current =
      this._current < 0
        ? direction > 0
          ? 0
          : count - 1
        : (this._current + direction + count) % count;
    this._reveal(this._shownPosition(this._matches[this._current]));
    this._matchesChanged.emit();
    this._invalidate();
  }

  /**
   * The number of problem lines (tracebacks, errors) in the view.
   */
  get problemCount(): number {
    return this.buffer.problemCount(this._replica);
  }

  /**
   * The shown position of the problem line gone to last, or -1.
   */
  get currentProblem(): number {
    return this._problem;
  }

  /**
   * Go to the next (or, with `-1`, the previous) problem line, from the one
   * gone to last, else from the top of the shown rows.
   *
   * @returns Whether there was one.
   */
  stepProblem(direction: 1 | -1): boolean {
    const from =
      this._problem >= 0
        ? this._problem
        : direction > 0
          ? this._firstShown - 1
          : this._firstShown;
    return this._goToProblem(
      this.buffer.nextProblem(this._shown(), from, direction)
    );
  }

  /**
   * Go to the first traceback, else the first problem line (a failed job's
   * log opens there).
   *
   * @returns Whether there was one.
   */
  revealFirstProblem(): boolean {
    const view = this._shown();
    const last = view.length - 1;
    let position = this.buffer.nextProblem(view, last, 1, TRACEBACK);
    if (position < 0) {
      position = this.buffer.nextProblem(view, last, 1);
    }
    return this._goToProblem(position);
  }

  /**
   * Scroll so that view line `position` is shown (and stop following); with
   * only matching lines shown, the first match from there.
   */
  scrollToLine(position: number): void {
    this._reveal(this._shownPosition(position));
    this._invalidate();
  }

  /**
   * Tell the view that the buffer changed; renders on the next frame.
   */
  refresh(): void {
    const redrawn = this.buffer.takeRedrawn();
    if (this._query) {
      if (redrawn === null) {
        this._recomputeMatches();
      } else if (redrawn.length > 0) {
        this._recheckMatches(redrawn);
      }
    }
    if (this._query && this._view.length > this._searchedUpTo) {
      const more = this.buffer.search(
        this._view,
        this._query,
        this._searchedUpTo
      );
      this._searchedUpTo = this._view.length;
      if (more.length > 0) {
        this._matches = this._matches.concat(more);
        // The first match of a log read again (or still coming) is the current one.
        this._current = Math.max(this._current, 0);
        this._matchesChanged.emit();
      }
    }
    if (this._view.length < this._searchedUpTo) {
      // The buffer was cleared.
      this._problem = -1;
      this._recomputeMatches();
    }
    this.scheduleRender();
  }

  /**
   * Render on the next animation frame (once per frame at most).
   */
  scheduleRender(): void {
    if (this._frame !== 0 || this.isDisposed) {
      return;
    }
    this._frame = requestAnimationFrame(() => {
      this._frame = 0;
      this.render();
    });
  }

  /**
   * Render the visible rows now.
   */
  render(): void {
    if (this.isDisposed || !this.isVisible) {
      return;
    }
    const view = this._shown();
    if (this._wrap) {
      this._renderWrapped(view);
      return;
    }
    const count = view.length;
    const total = count * LINE_HEIGHT;
    const scaled = total > MAX_SCROLL_HEIGHT;
    const height = scaled ? MAX_SCROLL_HEIGHT : total;
    if (this._height !== height) {
      this._height = height;
      this._sizer.style.height = `${height}px`;
    }
    const node = this.node;
    const client = node.clientHeight;
    const visible = Math.ceil(client / LINE_HEIGHT) + 1;
    if (this._follow) {
      const bottom = Math.max(0, height - client);
      if (node.scrollTop !== bottom) {
        this._programmatic = true;
        node.scrollTop = bottom;
      }
    } else if (this._target !== null) {
      const target = this._target;
      this._target = null;
      const top = scaled
        ? (target / Math.max(1, count - visible + 1)) *
          Math.max(0, height - client)
        : target * LINE_HEIGHT - client / 2 + LINE_HEIGHT;
      this._programmatic = true;
      node.scrollTop = Math.max(0, Math.min(top, height - client));
    }
    const scrollTop = node.scrollTop;
    let first: number;
    let top: number;
    if (!scaled) {
      first = Math.floor(scrollTop / LINE_HEIGHT);
      top = first * LINE_HEIGHT;
    } else {
      const range = Math.max(1, height - client);
      first = Math.round(
        (Math.min(scrollTop, range) / range) * Math.max(0, count - visible + 1)
      );
      top = Math.min(scrollTop, Math.max(0, height - visible * LINE_HEIGHT));
    }
    first = Math.max(0, Math.min(first, Math.max(0, count - 1)));
    const rows = Math.max(0, Math.min(visible, count - first));
    this._rows.style.transform = `translateY(${top}px)`;
    this._firstShown = first;
    this._fillRows(view, first, rows);
  }

  /**
   * Render wrapped rows: each as tall as its text, so rows are placed from
   * an anchor line rather than at 18 px a line. The scroll position maps to a
   * fractional line (the anchor) and to a point of the view where it is
   * drawn: the top at the start, the bottom at the end, every line reachable
   * whatever its height. The rows are measured once a frame.
   */
  private _renderWrapped(view: ILogView): void {
    const count = view.length;
    const node = this.node;
    const client = node.clientHeight;
    // The scroll range follows the rows' measured height (a few wrapped lines
    // may be taller than the view).
    const height = Math.min(
      MAX_SCROLL_HEIGHT,
      Math.ceil(count * this._wrappedRowHeight)
    );
    if (this._height !== height) {
      this._height = height;
      this._sizer.style.height = `${height}px`;
    }
    const range = Math.max(0, height - client);
    if (this._follow) {
      if (node.scrollTop !== range) {
        this._programmatic = true;
        node.scrollTop = range;
      }
    } else if (this._target !== null) {
      const target = this._target;
      this._target = null;
      this._programmatic = true;
      node.scrollTop = (range * (target + 0.5)) / Math.max(1, count);
    }
    const scrollTop = Math.min(node.scrollTop, range);
    const fraction = range > 0 ? scrollTop / range : this._follow ? 1 : 0;
    const anchor = fraction * count;
    const index = Math.max(0, Math.min(count - 1, Math.floor(anchor)));
    const within = Math.min(1, anchor - index);
    const visible = Math.ceil(client / LINE_HEIGHT) + 1;
    const first = Math.max(0, index - visible);
    const rows = Math.max(0, Math.min(count, index + visible + 1) - first);
    this._rows.style.transform = `translateY(${scrollTop}px)`;
    this._rows.style.height = `${client}px`;
    // Wrapped text hangs under the text, not under the time and replica.
    const prefix =
      (this._replica === null ? this.buffer.prefixWidth + 3 : 0) +
      (this._timestamps ? Private.TIME_WIDTH + 1 : 0);
    this._rows.style.setProperty('--jp-PyTorchJobLogs-indent', `${prefix}ch`);
    this._firstShown = index;
    this._fillRows(view, first, rows);
    if (rows === 0) {
      return;
    }
    // One layout for every row's height (an unrendered row counts 18 px).
    const children = this._rows.children;
    const heights: number[] = [];
    for (let k = 0; k < rows; k++) {
      heights.push(
        Math.max(LINE_HEIGHT, (children[k] as HTMLElement).offsetHeight)
      );
    }
    let above = 0;
    for (let k = 0; k < index - first; k++) {
      above += heights[k];
    }
    // The anchor line at `fraction` of the view, `within` of it above that.
    let offset = fraction * client - within * heights[index - first] - above;
    const total = heights.reduce((sum, h) => sum + h, 0);
    if (first + rows === count && offset + total < client) {
      offset = client - total; // the end: the last line at the bottom
    }
    if (first === 0) {
      offset = Math.min(offset, 0); // the start: the first line at the top
    }
    for (let k = 0; k < rows; k++) {
      (children[k] as HTMLElement).style.marginTop =
        k === 0 ? `${Math.round(offset)}px` : '';
    }
    const average = total / rows;
    if (
      Math.abs(average - this._wrappedRowHeight) >
      this._wrappedRowHeight / 4
    ) {
      this._wrappedRowHeight = average;
      this.scheduleRender();
    }
  }

  /**
   * Fill the rows with the shown lines `first` to `first + rows`: only the
   * rows whose line, text or marks changed.
   */
  private _fillRows(view: ILogView, first: number, rows: number): void {
    while (this._rows.childElementCount > rows) {
      this._rows.lastChild!.remove();
    }
    while (this._rows.childElementCount < rows) {
      const row = document.createElement('div');
      row.className = 'jp-PyTorchJobLogs-row';
      this._rows.appendChild(row);
    }
    const merged = this._replica === null;
    const width = merged ? this.buffer.prefixWidth : 0;
    const currentLine =
      this._current >= 0
        ? this._shownPosition(this._matches[this._current])
        : undefined;
    const query = this._query;
    const times = this._timestamps;
    const stamp = `${this._renderKey}:${width}:${query}:${currentLine}:${this._problem}:${times}`;
    this._shownTexts.length = rows;
    for (let k = 0; k < rows; k++) {
      const row = this._rows.children[k] as HTMLDivElement;
      row.style.marginTop = '';
      const position = first + k;
      const line = view.lineAt(position);
      const key = `${line}:${stamp}`;
      // A redraw changes a line's text, not its index.
      const text = this.buffer.text(line);
      if (row.dataset.key === key && this._shownTexts[k] === text) {
        continue;
      }
      row.dataset.key = key;
      this._shownTexts[k] = text;
      Private.fill(
        row,
        this.buffer,
        line,
        merged,
        width,
        query,
        position === currentLine || position === this._problem,
        times
      );
    }
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this.node.addEventListener('scroll', this);
    // The height comes from CSS (flex under the viewer's header), which can
    // change with no Lumino resize message: rows rendered for a smaller box
    // would stay too few until the next line arrives (never, once finished).
    if (typeof ResizeObserver !== 'undefined') {
      this._resizeObserver = new ResizeObserver(() => this.scheduleRender());
      this._resizeObserver.observe(this.node);
    }
    this.scheduleRender();
  }

  protected onBeforeDetach(msg: Message): void {
    this.node.removeEventListener('scroll', this);
    this._resizeObserver?.disconnect();
    this._resizeObserver = null;
    super.onBeforeDetach(msg);
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this.scheduleRender();
  }

  protected onResize(msg: Widget.ResizeMessage): void {
    super.onResize(msg);
    this.scheduleRender();
  }

  /**
   * Handle the DOM events of the widget.
   */
  handleEvent(event: Event): void {
    if (event.type === 'scroll') {
      if (this._programmatic) {
        this._programmatic = false;
      } else {
        const node = this.node;
        const atBottom =
          node.scrollTop + node.clientHeight >= node.scrollHeight - LINE_HEIGHT;
        this.follow = atBottom;
      }
      this.scheduleRender();
    }
  }

  dispose(): void {
    if (this._frame !== 0) {
      cancelAnimationFrame(this._frame);
      this._frame = 0;
    }
    super.dispose();
    Signal.clearData(this);
  }

  private _reveal(position: number): void {
    this._target = position;
    this.follow = false;
    this.scheduleRender();
  }

  /**
   * The view shown: every line of the replica, or its matching lines alone.
   */
  private _shown(): ILogView {
    return this._onlyMatching && this._query ? this._matchView : this._view;
  }

  /**
   * The shown position of view line `position` (with only matching lines
   * shown: of the first match at or after it).
   */
  private _shownPosition(position: number): number {
    return this._shown() === this._matchView
      ? Private.lowerBound(this._matches, position)
      : position;
  }

  /**
   * After the rows changed shape: the current match in view, else the same
   * place (the end, when following).
   */
  private _revealCurrent(): void {
    if (!this._follow && this._current >= 0) {
      this._reveal(this._shownPosition(this._matches[this._current]));
    }
    this._invalidate();
  }

  private _goToProblem(position: number): boolean {
    if (position < 0) {
      return false;
    }
    this._problem = position;
    this._reveal(position);
    this._invalidate();
    this._matchesChanged.emit();
    return true;
  }

  /**
   * Redrawn lines may match now, or no longer: only they are searched again.
   */
  private _recheckMatches(lines: readonly number[]): void {
    let changed = false;
    for (const line of lines) {
      const position = this._view.positionOf(line);
      if (position < 0 || position >= this._searchedUpTo) {
        continue; // not shown, or searched when it comes
      }
      const matches = this.buffer.lineMatches(line, this._query);
      const at = Private.lowerBound(this._matches, position);
      const listed = this._matches[at] === position;
      if (matches === listed) {
        continue;
      }
      changed = true;
      if (matches) {
        this._matches.splice(at, 0, position);
        if (this._current >= at) {
          this._current++;
        }
      } else {
        this._matches.splice(at, 1);
        if (this._current > at || this._current >= this._matches.length) {
          this._current--;
        }
      }
    }
    if (changed) {
      if (this._current < 0 && this._matches.length > 0) {
        this._current = 0;
      }
      this._matchesChanged.emit();
    }
  }

  private _recomputeMatches(): void {
    this._matches = this._query
      ? this.buffer.search(this._view, this._query)
      : [];
    this._searchedUpTo = this._view.length;
    this._current = this._matches.length > 0 ? 0 : -1;
    this._matchesChanged.emit();
  }

  private _invalidate(): void {
    this._renderKey++;
    this.scheduleRender();
  }

  private _sizer: HTMLDivElement;
  private _rows: HTMLDivElement;
  private _view: ILogView;
  private _matchView: ILogView;
  private _wrap = false;
  private _timestamps = false;
  private _onlyMatching = false;
  // The mean height of the wrapped rows last rendered: the scroll range.
  private _wrappedRowHeight = LINE_HEIGHT;
  private _replica: string | null = null;
  private _follow = true;
  private _height = -1;
  private _resizeObserver: ResizeObserver | null = null;
  private _frame = 0;
  private _target: number | null = null;
  private _programmatic = false;
  private _query = '';
  private _matches: number[] = [];
  private _searchedUpTo = 0;
  private _current = -1;
  private _renderKey = 0;
  private _problem = -1;
  private _firstShown = 0;
  private _shownTexts: string[] = [];
  private _followChanged = new Signal<this, boolean>(this);
  private _matchesChanged = new Signal<this, void>(this);
}

/**
 * A namespace for `LogLines` types.
 */
export namespace LogLines {
  /**
   * The options of the view.
   */
  export interface IOptions {
    /**
     * The buffer to show.
     */
    buffer: LogBuffer;

    /**
     * The accessible name of the log.
     */
    label?: string;
  }
}

/**
 * Module-private helpers.
 */
namespace Private {
  /**
   * The lines of a view that match the query: the view positions in
   * `matches` (ascending), read live.
   */
  export class MatchView implements ILogView {
    constructor(
      private readonly _view: () => ILogView,
      private readonly _matches: () => readonly number[]
    ) {}

    get length(): number {
      return this._matches().length;
    }

    lineAt(i: number): number {
      return this._view().lineAt(this._matches()[i]);
    }

    positionOf(line: number): number {
      const position = this._view().positionOf(line);
      if (position < 0) {
        return -1;
      }
      const matches = this._matches();
      const at = lowerBound(matches, position);
      return matches[at] === position ? at : -1;
    }
  }

  /**
   * The first index of ascending `items` whose item is not below `value`.
   */
  export function lowerBound(items: readonly number[], value: number): number {
    let lo = 0;
    let hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (items[mid] < value) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /**
   * The width of a line's time (`HH:MM:SS.mmm`), in characters.
   */
  export const TIME_WIDTH = 12;

  let clockFormat: Intl.DateTimeFormat | null = null;

  /**
   * A line's time of day, local, to the millisecond (24 h).
   */
  export function clock(): Intl.DateTimeFormat {
    // fractionalSecondDigits: ES2021, past this project's TypeScript lib.
    clockFormat ??= new Intl.DateTimeFormat(undefined, {
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      fractionalSecondDigits: 3,
      hourCycle: 'h23'
    } as Intl.DateTimeFormatOptions);
    return clockFormat;
  }

  /**
   * Fill a row with a line: its time (with `times`), the replica prefix, then
   * the text (in its ANSI colours) with the query's occurrences marked; a
   * problem line is marked.
   */
  export function fill(
    row: HTMLDivElement,
    buffer: LogBuffer,
    line: number,
    merged: boolean,
    width: number,
    query: string,
    current: boolean,
    times: boolean
  ): void {
    row.textContent = '';
    row.classList.toggle('jp-mod-current', current);
    const flags = buffer.flags(line);
    row.classList.toggle('jp-mod-problem', (flags & PROBLEM) !== 0);
    row.classList.toggle('jp-mod-traceback', (flags & TRACEBACK) !== 0);
    if (times) {
      const when = buffer.time(line);
      const time = document.createElement('span');
      time.className = 'jp-PyTorchJobLogs-time';
      if (when === null) {
        time.textContent = ' '.repeat(TIME_WIDTH + 1);
      } else {
        const date = new Date(when * 1000);
        time.textContent = `${clock().format(date)} `;
        time.title = date.toLocaleString();
      }
      row.appendChild(time);
    }
    if (merged) {
      const prefix = document.createElement('span');
      const index = buffer.replicaIndex(line);
      prefix.className = `jp-PyTorchJobLogs-prefix jp-mod-replica${index % REPLICA_COLOURS}`;
      prefix.textContent = `${buffer.replicaOf(line).padEnd(width)} | `;
      row.appendChild(prefix);
    }
    const text = buffer.text(line);
    let host: HTMLElement = row;
    if (hasEscapes(text)) {
      host = document.createElement('span');
      host.className = 'jp-PyTorchJobLogs-text jp-RenderedText';
      row.appendChild(host);
      renderColoured(host, text);
    } else {
      host.appendChild(document.createTextNode(text));
    }
    if (query) {
      markMatches(host, query);
    }
  }

  /**
   * Wrap the occurrences of `query` in the text under `root` in `<mark>`s,
   * also where colours split an occurrence (a mark per piece).
   */
  function markMatches(root: HTMLElement, query: string): void {
    const texts: Text[] = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement?.classList;
      if (
        !parent?.contains('jp-PyTorchJobLogs-prefix') &&
        !parent?.contains('jp-PyTorchJobLogs-time')
      ) {
        texts.push(node as Text);
      }
    }
    const full = texts.map(node => node.data).join('');
    const smart = query !== query.toLowerCase();
    const hay = smart ? full : full.toLowerCase();
    const needle = smart ? query : query.toLowerCase();
    const ranges: [number, number][] = [];
    for (
      let at = hay.indexOf(needle);
      at !== -1;
      at = hay.indexOf(needle, at + needle.length)
    ) {
      ranges.push([at, at + needle.length]);
    }
    if (ranges.length === 0) {
      return;
    }
    let offset = 0;
    for (const node of texts) {
      const start = offset;
      const end = start + node.data.length;
      offset = end;
      const pieces: Node[] = [];
      let from = start;
      for (const [a, b] of ranges) {
        const lo = Math.max(a, start);
        const hi = Math.min(b, end);
        if (lo >= hi) {
          continue;
        }
        if (lo > from) {
          pieces.push(document.createTextNode(full.slice(from, lo)));
        }
        const mark = document.createElement('mark');
        mark.className = 'jp-PyTorchJobLogs-match';
        mark.textContent = full.slice(lo, hi);
        pieces.push(mark);
        from = hi;
      }
      if (pieces.length === 0) {
        continue;
      }
      if (from < end) {
        pieces.push(document.createTextNode(full.slice(from, end)));
      }
      node.replaceWith(...pieces);
    }
  }
}
