/**
 * The log viewer: every replica merged with coloured prefixes, a tab per
 * replica, follow/pause, search (and only the matching lines), next/previous
 * error, previous container, wrapped or sideways-scrolling lines, each line's
 * time, download (as shown, or raw); a failed job's log opens at its first
 * traceback.
 *
 * @packageDocumentation
 */

import { TranslationBundle } from '@jupyterlab/translation';
import {
  caretDownIcon,
  caretUpIcon,
  downloadIcon,
  errorIcon,
  filterIcon,
  LabIcon,
  moveDownIcon,
  moveUpIcon,
  ReactWidget,
  ToolbarButtonComponent
} from '@jupyterlab/ui-components';
import { ISignal, Signal } from '@lumino/signaling';
import { PanelLayout, Widget } from '@lumino/widgets';
import * as React from 'react';

import { PyTorchJobClient } from '../api';
import { clockIcon, wrapIcon } from '../icons';
import { LogBuffer } from './buffer';
import { LogLines, REPLICA_COLOURS } from './lines';
import { LogStream } from './stream';

/**
 * The logs of one job.
 */
export class LogViewer extends Widget {
  /**
   * Construct a viewer; it connects at once.
   */
  constructor(options: LogViewer.IOptions) {
    super();
    this.jobName = options.name;
    this._client = options.client;
    this._trans = options.trans;
    this.addClass('jp-PyTorchJobLogs');
    this.buffer = new LogBuffer();
    for (const replica of options.replicas ?? []) {
      this.buffer.addReplica(replica);
    }
    this.lines = new LogLines({
      buffer: this.buffer,
      label: this._trans.__('Log of %1', this.jobName)
    });
    this._header = new Private.HeaderWidget(this);
    // A flex column (style/logs.css): the header takes what it needs.
    const layout = new PanelLayout();
    layout.addWidget(this._header);
    layout.addWidget(this.lines);
    this.layout = layout;
    this.lines.followChanged.connect(this._update, this);
    this.lines.matchesChanged.connect(this._update, this);
    if (options.replica) {
      this.lines.replica = options.replica;
    }
    this.lines.wrap = options.wrap ?? false;
    this.lines.onlyMatching = options.onlyMatching ?? false;
    this.lines.timestamps = options.timestamps ?? false;
    this._previous = options.previous ?? false;
    this._why = options.why ?? '';
    this._openAtProblem = options.failed ?? false;
    this._connect();
  }

  /**
   * The job's name.
   */
  readonly jobName: string;

  /**
   * The lines received.
   */
  readonly buffer: LogBuffer;

  /**
   * The virtualised rows.
   */
  readonly lines: LogLines;

  /**
   * The translation bundle.
   */
  get trans(): TranslationBundle {
    return this._trans;
  }

  /**
   * The stream's status.
   */
  get status(): LogStream.Status {
    return this._stream?.status ?? 'idle';
  }

  /**
   * The stream's error, if it failed.
   */
  get error(): string {
    return this._stream?.error ?? '';
  }

  /**
   * Notices about replicas' logs (e.g. a pod whose node is gone).
   */
  get notices(): ReadonlyMap<string, string> {
    return this._stream?.notices ?? new Map();
  }

  /**
   * Whether the previous containers' logs are shown.
   */
  get previous(): boolean {
    return this._previous;
  }
  set previous(value: boolean) {
    if (value === this._previous) {
      return;
    }
    this._previous = value;
    // The reason for the choice no longer holds once the user chose.
    this._why = '';
    this._connect();
  }

  /**
   * Why the viewer shows what it shows, in one line, when it chose for the
   * user (a failed job's failing run); empty otherwise.
   */
  get why(): string {
    return this._why;
  }

  /**
   * Show the previous containers (or not), saying why.
   */
  showPrevious(previous: boolean, why: string): void {
    this.previous = previous;
    this._why = why;
    this._update();
  }

  /**
   * How the lines are shown: what a restored tab keeps.
   */
  get viewOptions(): LogViewer.IViewOptions {
    return {
      wrap: this.lines.wrap,
      onlyMatching: this.lines.onlyMatching,
      timestamps: this.lines.timestamps
    };
  }

  /**
   * Emitted when `viewOptions` change.
   */
  get viewOptionsChanged(): ISignal<this, LogViewer.IViewOptions> {
    return this._viewOptionsChanged;
  }

  /**
   * Wrap long lines, or scroll them sideways.
   */
  setWrap(wrap: boolean): void {
    this.lines.wrap = wrap;
    this._viewOptionsUpdated();
  }

  /**
   * Show each line's time, or not. The times come with the stream: turned on
   * for a stream without them, the log is read again with them.
   */
  setTimestamps(timestamps: boolean): void {
    this.lines.timestamps = timestamps;
    if (timestamps && !this._timedStream) {
      this._connect();
    }
    this._viewOptionsUpdated();
  }

  /**
   * Show only the lines matching the search (every line without one).
   */
  setOnlyMatching(onlyMatching: boolean): void {
    this.lines.onlyMatching = onlyMatching;
    this._viewOptionsUpdated();
  }

  /**
   * Show one replica, or all (`null`).
   */
  selectReplica(replica: string | null): void {
    this.lines.replica = replica;
    this._update();
  }

  /**
   * Search the log.
   */
  search(query: string): void {
    this.lines.setQuery(query);
    this._update();
  }

  /**
   * Save the shown lines to a file: as shown (no colour codes), or `raw`:
   * as the program wrote them (colour codes and progress-bar redraws kept).
   */
  download(raw = false): void {
    const replica = this.lines.replica;
    const text = this.buffer.toText(
      this.buffer.view(replica),
      replica === null,
      raw,
      this.lines.timestamps
    );
    const blob = new Blob([text], { type: 'text/plain' });
    const url = URL.createObjectURL(blob);
    const link = document.createElement('a');
    link.href = url;
    link.download = `${this.jobName}${replica ? '-' + replica : ''}${this._previous ? '-previous' : ''}${raw ? '-raw' : ''}.log`;
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  /**
   * Reconnect from scratch.
   */
  reload(): void {
    this._connect();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._stream?.dispose();
    this._stream = null;
    super.dispose();
  }

  private _connect(): void {
    this._stream?.dispose();
    const replicas = [...this.buffer.replicas];
    this.buffer.clear();
    for (const replica of replicas) {
      this.buffer.addReplica(replica);
    }
    const previous = this._previous;
    const timestamps = this.lines.timestamps;
    this._timedStream = timestamps;
    const stream = new LogStream({
      buffer: this.buffer,
      WebSocket: this._client.serverSettings.WebSocket,
      url: since =>
        this._client.logsUrl(this.jobName, {
          follow: !previous,
          previous,
          since,
          timestamps
        })
    });
    this._stream = stream;
    stream.received.connect(this._onReceived, this);
    stream.statusChanged.connect(this._onStatus, this);
    stream.start();
    this.lines.refresh();
    this._update();
  }

  private _onStatus(): void {
    // A failed job's whole log is in once the stream ends: show its first
    // traceback (else its first error) instead of the end.
    if (this._openAtProblem && this.status === 'ended') {
      this._openAtProblem = false;
      this.lines.refresh();
      this.lines.revealFirstProblem();
    }
    this._update();
  }

  private _onReceived(): void {
    this.lines.refresh();
    if (this.buffer.replicas.length !== this._knownReplicas) {
      this._knownReplicas = this.buffer.replicas.length;
      this._update();
    }
    this._scheduleHeader();
  }

  /**
   * Line counts in the header change often: refresh it at most twice a second.
   */
  private _scheduleHeader(): void {
    if (this._headerTimer !== null) {
      return;
    }
    this._headerTimer = setTimeout(() => {
      this._headerTimer = null;
      this._update();
    }, 500);
  }

  private _update(): void {
    if (!this.isDisposed) {
      this._header.update();
    }
  }

  private _viewOptionsUpdated(): void {
    this._viewOptionsChanged.emit(this.viewOptions);
    this._update();
  }

  private _client: PyTorchJobClient;
  private _trans: TranslationBundle;
  private _header: ReactWidget;
  private _stream: LogStream | null = null;
  private _previous = false;
  private _why = '';
  private _openAtProblem: boolean;
  private _knownReplicas = 0;
  // Whether the current stream brings the lines' times.
  private _timedStream = false;
  private _headerTimer: ReturnType<typeof setTimeout> | null = null;
  private _viewOptionsChanged = new Signal<this, LogViewer.IViewOptions>(this);
}

/**
 * A namespace for `LogViewer` types.
 */
export namespace LogViewer {
  /**
   * How the lines are shown.
   */
  export interface IViewOptions {
    /**
     * Long lines wrap (else they scroll sideways).
     */
    wrap: boolean;

    /**
     * Only the lines matching the search are shown.
     */
    onlyMatching: boolean;

    /**
     * Each line shows its time.
     */
    timestamps: boolean;
  }

  /**
   * The options of a viewer.
   */
  export interface IOptions extends Partial<IViewOptions> {
    /**
     * The job.
     */
    name: string;

    /**
     * The REST client.
     */
    client: PyTorchJobClient;

    /**
     * The translation bundle.
     */
    trans: TranslationBundle;

    /**
     * The replicas known in advance (for their tabs and colours).
     */
    replicas?: string[];

    /**
     * The replica to show first; all by default.
     */
    replica?: string | null;

    /**
     * Start on the previous containers' logs.
     */
    previous?: boolean;

    /**
     * Why the viewer starts where it does, shown as one line.
     */
    why?: string;

    /**
     * Whether the job failed: the log opens at its first traceback.
     */
    failed?: boolean;
  }
}

/**
 * Module-private components.
 */
namespace Private {
  /**
   * The order of replica tabs: master first, then workers by index.
   */
  export function sortReplicas(names: readonly string[]): string[] {
    const rank = (name: string): [number, number] => {
      const match = /^(.*)-(\d+)$/.exec(name);
      const role = match ? match[1] : name;
      const index = match ? Number(match[2]) : 0;
      return [role === 'master' ? 0 : 1, index];
    };
    return [...names].sort((a, b) => {
      const [ra, ia] = rank(a);
      const [rb, ib] = rank(b);
      return (
        ra - rb || a.split('-')[0].localeCompare(b.split('-')[0]) || ia - ib
      );
    });
  }

  /**
   * A toolbar toggle: its icon, pressed or not, each state's tooltip.
   */
  export function Toggle(props: {
    className: string;
    icon: LabIcon;
    off: string;
    on: string;
    pressed: boolean;
    toggle: (value: boolean) => void;
  }): JSX.Element {
    return (
      <ToolbarButtonComponent
        className={props.className}
        icon={props.icon}
        tooltip={props.off}
        pressedTooltip={props.on}
        pressed={props.pressed}
        onClick={() => props.toggle(!props.pressed)}
      />
    );
  }

  /**
   * The status line of a stream.
   */
  export function statusText(viewer: LogViewer): string {
    const trans = viewer.trans;
    switch (viewer.status) {
      case 'connecting':
        return trans.__('Connecting…');
      case 'open':
        return viewer.previous
          ? trans.__('Loading the previous containers’ logs…')
          : trans.__('Streaming');
      case 'reconnecting':
        return trans.__('Connection lost; reconnecting…');
      case 'ended':
        return trans.__('End of log');
      case 'error':
        return trans.__('Error: %1', viewer.error);
      default:
        return '';
    }
  }

  /**
   * The widget of the header (re-rendered on every `update()`).
   */
  export class HeaderWidget extends ReactWidget {
    constructor(viewer: LogViewer) {
      super();
      this._viewer = viewer;
      this.addClass('jp-PyTorchJobLogs-header');
    }

    protected render(): JSX.Element {
      return <Header viewer={this._viewer} version={++this._version} />;
    }

    private _viewer: LogViewer;
    private _version = 0;
  }

  /**
   * The toolbar, tabs and status of the viewer.
   */
  export function Header(props: {
    viewer: LogViewer;
    version: number;
  }): JSX.Element {
    const viewer = props.viewer;
    const trans = viewer.trans;
    const lines = viewer.lines;
    const [query, setQuery] = React.useState(lines.query);
    const timer = React.useRef<ReturnType<typeof setTimeout> | null>(null);
    const onQuery = (value: string): void => {
      setQuery(value);
      if (timer.current !== null) {
        clearTimeout(timer.current);
      }
      timer.current = setTimeout(() => viewer.search(value), 200);
    };
    const matches = lines.matches.length;
    const problems = lines.problemCount;
    const replicas = sortReplicas(viewer.buffer.replicas);
    const tab = (replica: string | null, label: string, colour?: number) => (
      <button
        key={replica ?? '*'}
        type="button"
        role="tab"
        aria-selected={lines.replica === replica}
        className={
          'jp-PyTorchJobLogs-tab' +
          (lines.replica === replica ? ' jp-mod-active' : '')
        }
        onClick={() => viewer.selectReplica(replica)}
      >
        {colour !== undefined && (
          <span
            className={`jp-PyTorchJobLogs-swatch jp-mod-replica${colour % REPLICA_COLOURS}`}
            aria-hidden="true"
          />
        )}
        {label}
      </button>
    );
    return (
      <div className="jp-PyTorchJobLogs-toolbar-wrapper">
        <div
          className="jp-PyTorchJobLogs-toolbar"
          role="toolbar"
          aria-label={trans.__('Log tools')}
        >
          <span className="jp-PyTorchJobLogs-name">{viewer.jobName}</span>
          <label className="jp-PyTorchJobLogs-check">
            <input
              type="checkbox"
              checked={lines.follow}
              onChange={e => {
                lines.follow = e.currentTarget.checked;
              }}
            />
            {trans.__('Follow')}
          </label>
          <label className="jp-PyTorchJobLogs-check">
            <input
              type="checkbox"
              checked={viewer.previous}
              onChange={e => {
                viewer.previous = e.currentTarget.checked;
              }}
            />
            {trans.__('Previous container')}
          </label>
          <span className="jp-PyTorchJobLogs-search">
            <input
              type="search"
              className="jp-mod-styled"
              placeholder={trans.__('Search the log')}
              aria-label={trans.__('Search the log')}
              value={query}
              onChange={e => onQuery(e.currentTarget.value)}
              onKeyDown={e => {
                if (e.key === 'Enter') {
                  if (timer.current !== null) {
                    clearTimeout(timer.current);
                    timer.current = null;
                  }
                  if (lines.query !== query) {
                    viewer.search(query);
                  } else {
                    lines.step(e.shiftKey ? -1 : 1);
                  }
                }
              }}
            />
            <span className="jp-PyTorchJobLogs-matches" aria-live="polite">
              {lines.query
                ? matches > 0
                  ? trans.__('%1 of %2', lines.currentMatch + 1, matches)
                  : trans.__('No matches')
                : ''}
            </span>
            <button
              type="button"
              className="jp-PyTorchJobLogs-button"
              title={trans.__('Previous match')}
              aria-label={trans.__('Previous match')}
              disabled={matches === 0}
              onClick={() => lines.step(-1)}
            >
              <caretUpIcon.react tag="span" />
            </button>
            <button
              type="button"
              className="jp-PyTorchJobLogs-button"
              title={trans.__('Next match')}
              aria-label={trans.__('Next match')}
              disabled={matches === 0}
              onClick={() => lines.step(1)}
            >
              <caretDownIcon.react tag="span" />
            </button>
            <Toggle
              className="jp-PyTorchJobLogs-onlyMatching"
              icon={filterIcon}
              off={trans.__('Show only the lines that match the search')}
              on={trans.__('Show every line')}
              pressed={lines.onlyMatching}
              toggle={value => viewer.setOnlyMatching(value)}
            />
          </span>
          <span className="jp-PyTorchJobLogs-problems">
            <errorIcon.react
              tag="span"
              className="jp-PyTorchJobLogs-problemIcon"
            />
            <span>{trans._n('%1 error', '%1 errors', problems)}</span>
            {([-1, 1] as const).map(direction => (
              <ToolbarButtonComponent
                key={direction}
                className={
                  direction < 0
                    ? 'jp-PyTorchJobLogs-previousError'
                    : 'jp-PyTorchJobLogs-nextError'
                }
                icon={direction < 0 ? moveUpIcon : moveDownIcon}
                tooltip={
                  direction < 0
                    ? trans.__(
                        'Previous error: a traceback or a line saying Error'
                      )
                    : trans.__('Next error: a traceback or a line saying Error')
                }
                enabled={problems > 0}
                onClick={() => lines.stepProblem(direction)}
              />
            ))}
          </span>
          {[
            {
              className: 'jp-PyTorchJobLogs-wrap',
              icon: wrapIcon,
              off: trans.__('Wrap long lines'),
              on: trans.__('Do not wrap long lines: scroll them sideways'),
              pressed: lines.wrap,
              toggle: (value: boolean) => viewer.setWrap(value)
            },
            {
              className: 'jp-PyTorchJobLogs-timestamps',
              icon: clockIcon,
              off: trans.__('Show each line’s time'),
              on: trans.__('Hide the lines’ times'),
              pressed: lines.timestamps,
              toggle: (value: boolean) => viewer.setTimestamps(value)
            }
          ].map(props => (
            <Toggle key={props.className} {...props} />
          ))}
          <ToolbarButtonComponent
            className="jp-PyTorchJobLogs-download"
            icon={downloadIcon}
            tooltip={trans.__('Download the log as shown')}
            onClick={() => viewer.download()}
          />
          <ToolbarButtonComponent
            className="jp-PyTorchJobLogs-downloadRaw"
            icon={downloadIcon}
            label={trans.__('raw')}
            tooltip={trans.__(
              'Download the log as the program wrote it: colour codes and progress-bar redraws kept'
            )}
            onClick={() => viewer.download(true)}
          />
          <span
            className={`jp-PyTorchJobLogs-status jp-mod-${viewer.status}`}
            role="status"
          >
            {statusText(viewer)}
            {' · '}
            {lines.shownCount !== lines.lineCount
              ? trans._n(
                  '%2 of %1 line shown',
                  '%2 of %1 lines shown',
                  lines.lineCount,
                  lines.shownCount
                )
              : trans._n('%1 line', '%1 lines', lines.lineCount)}
          </span>
        </div>
        <div
          className="jp-PyTorchJobLogs-tabs"
          role="tablist"
          aria-label={trans.__('Replicas')}
        >
          {tab(null, trans.__('All replicas'))}
          {replicas.map(name =>
            tab(name, name, viewer.buffer.replicas.indexOf(name))
          )}
        </div>
        {viewer.why && (
          <p className="jp-PyTorchJobLogs-why" role="note">
            {viewer.why}
          </p>
        )}
        {viewer.notices.size > 0 && (
          <ul className="jp-PyTorchJobLogs-notices" role="alert">
            {[...viewer.notices].map(([replica, text]) => (
              <li key={replica}>
                <b>{replica}</b>: {text}
              </li>
            ))}
          </ul>
        )}
      </div>
    );
  }
}
