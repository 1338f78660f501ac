/**
 * The TensorBoard tab: TensorBoard's page in an IFrame, with a toolbar.
 *
 * @packageDocumentation
 */

import { MainAreaWidget } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import {
  IFrame,
  launchIcon,
  refreshIcon,
  stopIcon,
  ToolbarButton
} from '@jupyterlab/ui-components';
import { PromiseDelegate } from '@lumino/coreutils';
import { Message } from '@lumino/messaging';
import { Poll } from '@lumino/polling';
import { BoxLayout, Widget } from '@lumino/widgets';

import { pytorchIcon } from '../icons';
import { PolledList } from '../polled';
import { ITensorBoard } from '../tokens';
import { enableAutoReload, reloadData } from './frame';
import { directoryLabel } from './model';

/**
 * What a TensorBoard tab shows: a job's log directory, or a directory.
 */
export type TensorBoardTarget =
  { job: string } | { logdir: string } | { jobs: string[] };

/**
 * A key for a target, the same for the same job or directory.
 */
export function targetKey(target: TensorBoardTarget): string {
  return 'job' in target
    ? `job:${target.job}`
    : 'jobs' in target
      ? `jobs:${target.jobs.join(',')}`
      : `logdir:${target.logdir}`;
}

/**
 * A main-area tab showing one TensorBoard.
 *
 * The tab starts (or reuses) the TensorBoard, shows a spinner until it answers
 * and then its page. New data shows up by itself: TensorBoard's own automatic
 * reloading is turned on (unless the user turned it off in TensorBoard), and
 * while the tab is visible it presses TensorBoard's reload button every
 * `refreshInterval` seconds, since TensorBoard reloads every 30 s at most.
 * A TensorBoard the server stopped meanwhile (idle culling, a stop from
 * elsewhere) is noticed on the next tick; *Start again* or *Reload* restarts
 * it under the same URL.
 */
export class TensorBoardView extends MainAreaWidget<IFrame> {
  /**
   * Construct a tab and start its TensorBoard.
   */
  constructor(options: TensorBoardView.IOptions) {
    const content = new IFrame({
      sandbox: [
        'allow-scripts',
        'allow-same-origin',
        'allow-popups',
        'allow-forms',
        'allow-downloads',
        'allow-modals'
      ]
    });
    const started = new PromiseDelegate<ITensorBoard>();
    super({ content, reveal: started.promise });
    // A failed start is shown in the tab (and its caption); nothing else waits.
    this.revealed.catch(() => undefined);
    started.promise.catch(() => undefined);
    this._started = started;
    this._trans = options.trans;
    this.target = options.target;
    this._stop = options.stop;
    this._startBoard = options.start;
    this._isRunning = options.isRunning;
    this._urlOf = options.url;
    this._describeError = options.describeError;
    this.addClass('jp-PyTorchJobTensorBoard');
    this.title.icon = pytorchIcon;
    this.title.closable = true;
    this.title.label =
      'job' in this.target
        ? this._trans.__('TensorBoard: %1', this.target.job)
        : 'jobs' in this.target
          ? this._trans.__('TensorBoard: %1', this.target.jobs.join(', '))
          : this._trans.__(
              'TensorBoard: %1',
              directoryLabel(this.target.logdir)
            );
    this.title.caption = this._trans.__('Starting TensorBoard…');
    this._addButtons();
    this._refreshInterval = options.refreshInterval;
    void this._start();
  }

  /**
   * The job or directory shown.
   */
  readonly target: TensorBoardTarget;

  /**
   * The running TensorBoard, once started.
   */
  get board(): ITensorBoard | null {
    return this._board;
  }

  /**
   * Resolves with the TensorBoard once its page is loading; rejects with the
   * reason it could not start (also shown in the tab).
   */
  get started(): Promise<ITensorBoard> {
    return this._started.promise;
  }

  /**
   * Seconds between two reloads of the data while visible; 0 for none but
   * TensorBoard's own.
   */
  get refreshInterval(): number {
    return this._refreshInterval;
  }
  set refreshInterval(seconds: number) {
    const value = Number.isFinite(seconds) ? Math.max(0, seconds) : 0;
    if (value === this._refreshInterval) {
      return;
    }
    this._refreshInterval = value;
    this._poll?.dispose();
    this._poll = null;
    this._startPolling();
  }

  /**
   * The IFrame's element.
   */
  get frame(): HTMLIFrameElement | null {
    // MainAreaWidget drops its content to show a failed start's error.
    const content = this.content as IFrame | null;
    return content?.node.querySelector('iframe') ?? null;
  }

  /**
   * Show one scalar: TensorBoard's time series filtered to its tag (the
   * `tagFilter` of TensorBoard's own links), once this TensorBoard runs.
   */
  async showScalar(tag: string): Promise<void> {
    await this.started;
    if (!this.isDisposed) {
      this.content.url = `${this._url}?tagFilter=${encodeURIComponent(tag)}#timeseries`;
    }
  }

  /**
   * Fetch new data: TensorBoard's own reload (its page keeps its state), or a
   * reload of the page when it has no reload button (e.g. still loading).
   */
  async reload(): Promise<void> {
    const frame = this.frame;
    if (!frame || !this._board) {
      return;
    }
    if (this._stoppedBanner || !(await this._isRunning(this._board.id))) {
      return this.startAgain();
    }
    if (!reloadData(Private.frameDocument(frame))) {
      frame.src = this._url;
    }
  }

  /**
   * One tick of the timer: new data if the TensorBoard still runs, else the
   * *stopped* notice (it was culled after idling, or stopped elsewhere).
   */
  async refresh(): Promise<void> {
    if (!this._board || this._stoppedBanner) {
      return;
    }
    if (!(await this._isRunning(this._board.id))) {
      this._showStopped();
      return;
    }
    reloadData(Private.frameDocument(this.frame));
  }

  /**
   * Whether the tab shows that its TensorBoard has stopped.
   */
  get isStopped(): boolean {
    return this._stoppedBanner !== null;
  }

  /**
   * Start the TensorBoard again (same directory, same URL) and reload the page.
   */
  async startAgain(): Promise<void> {
    let board: ITensorBoard;
    try {
      board = await this._startBoard(this.target);
    } catch (reason) {
      this._showStopped(this._describeError(reason));
      return;
    }
    if (this.isDisposed) {
      return;
    }
    this._adopt(board);
    this._stoppedBanner?.dispose();
    this._stoppedBanner = null;
    const frame = this.frame;
    if (frame) {
      frame.src = this._url; // a navigation even when the URL is the same
    }
  }

  /**
   * Stop the TensorBoard and close the tab.
   */
  async stopBoard(): Promise<void> {
    if (this._board) {
      await this._stop(this._board.id);
    }
    this.dispose();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._poll?.dispose();
    this._poll = null;
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this._poll?.refresh();
  }

  private async _start(): Promise<void> {
    let board: ITensorBoard;
    try {
      board = await this._startBoard(this.target);
    } catch (reason) {
      const message = this._describeError(reason);
      this.title.caption = message;
      this._started.reject(new Error(message));
      return;
    }
    if (!this.isDisposed) {
      this._adopt(board);
      if (typeof window !== 'undefined' && window.localStorage) {
        enableAutoReload(window.localStorage);
      }
      this.content.url = this._url;
      this._startPolling();
    }
    this._started.resolve(board);
  }

  /**
   * Show this TensorBoard from now on (its page is loaded by the caller).
   */
  private _adopt(board: ITensorBoard): void {
    this._board = board;
    this._url = this._urlOf(board);
    this.title.caption = this._trans.__('TensorBoard on %1', board.logdir);
    this.node.dataset.tensorboard = board.id;
  }

  private _startPolling(): void {
    if (this._poll || !this._board || this._refreshInterval <= 0) {
      return;
    }
    this._poll = new Poll({
      name: `jupyter-pytorchjob:tensorboard-${this._board.id}`,
      factory: () => this.refresh(),
      frequency: { interval: this._refreshInterval * 1000, backoff: false },
      standby: () => !this.isVisible || PolledList.documentHidden()
    });
  }

  private _showStopped(message?: string): void {
    const trans = this._trans;
    this._stoppedBanner?.dispose();
    const banner = new Widget();
    banner.addClass('jp-PyTorchJobTensorBoard-stopped');
    const text = document.createElement('span');
    text.setAttribute('role', 'status');
    text.textContent =
      message ??
      trans.__(
        'This TensorBoard has stopped (idle for too long, or stopped elsewhere).'
      );
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'jp-mod-styled jp-mod-accept';
    button.textContent = trans.__('Start again');
    button.addEventListener('click', () => void this.startAgain());
    banner.node.append(text, button);
    this._stoppedBanner = banner;
    // Between the toolbar and the page: in the toolbar, a narrow tab would
    // fold it into the "More commands" menu.
    const layout = this.layout as BoxLayout;
    BoxLayout.setStretch(banner, 0);
    layout.insertWidget(layout.widgets.indexOf(this.toolbar) + 1, banner);
    this.title.caption = text.textContent;
  }

  private _addButtons(): void {
    const trans = this._trans;
    this.toolbar.addItem(
      'reload',
      new ToolbarButton({
        icon: refreshIcon,
        label: trans.__('Reload'),
        tooltip: trans.__('Fetch new data now'),
        onClick: () => void this.reload()
      })
    );
    this.toolbar.addItem(
      'open-in-browser',
      new ToolbarButton({
        icon: launchIcon,
        tooltip: trans.__('Open in a new browser tab'),
        onClick: () => {
          if (this._url) {
            window.open(this._url, '_blank', 'noopener');
          }
        }
      })
    );
    this.toolbar.addItem(
      'stop',
      new ToolbarButton({
        icon: stopIcon,
        label: trans.__('Stop'),
        tooltip: trans.__('Stop this TensorBoard and close the tab'),
        onClick: () => void this.stopBoard().catch(() => this.dispose())
      })
    );
  }

  private _trans: TranslationBundle;
  private _stop: (id: string) => Promise<void>;
  private _startBoard: (target: TensorBoardTarget) => Promise<ITensorBoard>;
  private _isRunning: (id: string) => Promise<boolean>;
  private _urlOf: (board: ITensorBoard) => string;
  private _describeError: (reason: unknown) => string;
  private _stoppedBanner: Widget | null = null;
  private _started: PromiseDelegate<ITensorBoard>;
  private _board: ITensorBoard | null = null;
  private _url = '';
  private _refreshInterval = 0;
  private _poll: Poll | null = null;
}

/**
 * A namespace for `TensorBoardView` statics.
 */
export namespace TensorBoardView {
  /**
   * The options of a tab.
   */
  export interface IOptions {
    /**
     * The job or directory to show.
     */
    target: TensorBoardTarget;

    /**
     * Start (or reuse) the TensorBoard, e.g. `client.startTensorBoard`.
     */
    start: (target: TensorBoardTarget) => Promise<ITensorBoard>;

    /**
     * Stop it (the toolbar's *Stop*).
     */
    stop: (id: string) => Promise<void>;

    /**
     * Whether it still runs (false only when the server says it is gone).
     */
    isRunning: (id: string) => Promise<boolean>;

    /**
     * The absolute URL of its page.
     */
    url: (board: ITensorBoard) => string;

    /**
     * A message a person can act on, for a failed start.
     */
    describeError: (reason: unknown) => string;

    /**
     * Seconds between two reloads of the data while visible; 0 for none.
     */
    refreshInterval: number;

    /**
     * The translation bundle of the `jupyter_pytorchjob` domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * Module-private helpers.
 */
namespace Private {
  /**
   * The document of a same-origin frame, or null.
   */
  export function frameDocument(
    frame: HTMLIFrameElement | null
  ): Document | null {
    try {
      return frame?.contentDocument ?? null;
    } catch {
      return null; // another origin (e.g. a redirect to a login page)
    }
  }
}
