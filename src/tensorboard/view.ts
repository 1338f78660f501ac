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
import { ISignal, Signal } from '@lumino/signaling';
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
 * it under the same URL. A start that fails is shown in the tab with *Retry*;
 * a tab restored after a failure (`failure`) shows it again and starts
 * nothing until *Retry* is pressed.
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
    // The page shows once the first start is settled: TensorBoard answers, or
    // the tab says why it could not start (never MainAreaWidget's bare error,
    // which drops the toolbar and offers no retry).
    const settled = new PromiseDelegate<void>();
    super({ content, reveal: settled.promise });
    this._settled = settled;
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
    if (options.failure) {
      this._fail(options.failure);
      this._fresh = false;
      this._started.reject(new Error(options.failure));
    } else {
      void this.startAgain();
    }
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
   * reason it could not start (also shown in the tab). The latest start's.
   */
  get started(): Promise<ITensorBoard> {
    return this._started.promise;
  }

  /**
   * Why the latest start failed; null once TensorBoard runs.
   */
  get failure(): string | null {
    return this._failure;
  }

  /**
   * Emitted when `failure` changes (what a restored tab shows).
   */
  get failureChanged(): ISignal<this, string | null> {
    return this._failureChanged;
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
    if (this._banner || !(await this._isRunning(this._board.id))) {
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
    if (!this._board || this._banner) {
      return;
    }
    if (!(await this._isRunning(this._board.id))) {
      this._showStopped();
      return;
    }
    reloadData(Private.frameDocument(this.frame));
  }

  /**
   * Whether the tab shows that its TensorBoard has stopped (or failed to
   * start again).
   */
  get isStopped(): boolean {
    return this._banner !== null;
  }

  /**
   * Start (or start again: same directory, same URL) the TensorBoard and
   * load its page; a failure is shown in the tab, with *Retry*.
   */
  async startAgain(): Promise<void> {
    if (this._starting) {
      return this._starting;
    }
    this._starting = this._start().finally(() => {
      this._starting = null;
    });
    return this._starting;
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
    // Each attempt settles a `started` of its own.
    const attempt = this._fresh
      ? this._started
      : (this._started = Private.startedDelegate());
    this._fresh = false;
    this._banner?.setBusy(true);
    let board: ITensorBoard;
    try {
      board = await this._startBoard(this.target);
    } catch (reason) {
      const message = this._describeError(reason);
      if (!this.isDisposed) {
        this._fail(message);
      }
      attempt.reject(new Error(message));
      this._settled.resolve();
      return;
    }
    if (!this.isDisposed) {
      this._adopt(board);
      this._banner?.dispose();
      this._banner = null;
      this.content.show();
      this._setFailure(null);
      if (typeof window !== 'undefined' && window.localStorage) {
        enableAutoReload(window.localStorage);
      }
      // A navigation even when the URL is the same (a restarted TensorBoard).
      this.content.url = this._url;
      this._startPolling();
    }
    attempt.resolve(board);
    this._settled.resolve();
  }

  /**
   * Show why TensorBoard could not start, with *Retry*, in place of its page.
   */
  private _fail(message: string): void {
    this.content.hide();
    this._showBanner(
      'jp-PyTorchJobTensorBoard-failed',
      message,
      this._trans.__('Retry')
    );
    this._setFailure(message);
    this._settled.resolve();
  }

  private _setFailure(failure: string | null): void {
    if (failure !== this._failure) {
      this._failure = failure;
      this._failureChanged.emit(failure);
    }
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

  private _showStopped(): void {
    const trans = this._trans;
    this._showBanner(
      'jp-PyTorchJobTensorBoard-stopped',
      trans.__(
        'This TensorBoard has stopped (idle for too long, or stopped elsewhere).'
      ),
      trans.__('Start again')
    );
  }

  /**
   * A line between the toolbar and the page saying what happened, with a
   * button that starts TensorBoard again.
   */
  private _showBanner(className: string, message: string, action: string) {
    this._banner?.dispose();
    const banner = new Private.Banner(message, action, () => this.startAgain());
    banner.addClass(className);
    this._banner = banner;
    // Between the toolbar and the page: in the toolbar, a narrow tab would
    // fold it into the "More commands" menu.
    const layout = this.layout as BoxLayout;
    BoxLayout.setStretch(banner, 0);
    layout.insertWidget(layout.widgets.indexOf(this.toolbar) + 1, banner);
    this.title.caption = message;
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
  private _banner: Private.Banner | null = null;
  private _started = Private.startedDelegate();
  // Whether `_started` is still for the next attempt.
  private _fresh = true;
  private _settled: PromiseDelegate<void>;
  private _starting: Promise<void> | null = null;
  private _failure: string | null = null;
  private _failureChanged = new Signal<this, string | null>(this);
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
     * Why it failed to start before (a tab restored after a failure): shown
     * with *Retry*, and nothing is started until then.
     */
    failure?: string | null;

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
   * The promise of one start; a failure is shown in the tab, so an unawaited
   * rejection is no error.
   */
  export function startedDelegate(): PromiseDelegate<ITensorBoard> {
    const delegate = new PromiseDelegate<ITensorBoard>();
    delegate.promise.catch(() => undefined);
    return delegate;
  }

  /**
   * What happened to the TensorBoard, and a button that starts it again
   * (disabled while it starts).
   */
  export class Banner extends Widget {
    constructor(message: string, action: string, onClick: () => void) {
      super();
      const text = document.createElement('span');
      text.setAttribute('role', 'status');
      text.textContent = message;
      this._button = document.createElement('button');
      this._button.type = 'button';
      this._button.className = 'jp-mod-styled jp-mod-accept';
      this._button.textContent = action;
      this._button.addEventListener('click', onClick);
      this.node.append(text, this._button);
    }

    /**
     * Whether a start is under way (the button waits).
     */
    setBusy(busy: boolean): void {
      this._button.disabled = busy;
    }

    private _button: HTMLButtonElement;
  }

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
