/**
 * The job list model: a `Poll` of `GET jobs` with backoff and standby.
 *
 * @packageDocumentation
 */

import { IDisposable } from '@lumino/disposable';
import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { isFinished } from './format';
import { PyTorchJobAPIError } from './request';
import { IJob } from './tokens';

/**
 * The list of jobs, refreshed while anybody looks at it.
 *
 * The poll backs off after failures (up to five minutes) and stands by while
 * the page is hidden, or while the panel is hidden and no job submitted from
 * this page is still running.
 */
export class JobsModel implements IDisposable {
  /**
   * Construct a model; it starts polling at once.
   */
  constructor(options: JobsModel.IOptions) {
    this._fetchJobs = options.fetchJobs;
    this._interval = Private.intervalMs(options.refreshInterval ?? 5);
    this._poll = new Poll<void, unknown, 'refresh'>({
      name: 'jupyter-pytorchjob:jobs',
      factory: () => this._fetch(),
      frequency: { interval: this._interval, backoff: true, max: 300 * 1000 },
      standby: () =>
        Private.documentHidden() || (!this._visible && this._tracked.size === 0)
    });
  }

  /**
   * The jobs, newest first.
   */
  get jobs(): readonly IJob[] {
    return this._jobs;
  }

  /**
   * The last failure to load the list, or `null` after a success.
   */
  get error(): PyTorchJobAPIError | null {
    return this._error;
  }

  /**
   * Whether the list has been loaded at least once.
   */
  get loaded(): boolean {
    return this._loaded;
  }

  /**
   * Emitted after every refresh (success or failure).
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Emitted when a tracked job (one submitted from this page) finishes.
   */
  get jobFinished(): ISignal<this, IJob> {
    return this._jobFinished;
  }

  /**
   * Whether the panel showing the list is visible.
   */
  get visible(): boolean {
    return this._visible;
  }
  set visible(value: boolean) {
    if (value === this._visible) {
      return;
    }
    this._visible = value;
    if (value) {
      void this._poll.refresh();
    }
  }

  /**
   * Seconds between two refreshes.
   */
  get refreshInterval(): number {
    return this._interval / 1000;
  }
  set refreshInterval(seconds: number) {
    const interval = Private.intervalMs(seconds);
    if (interval === this._interval) {
      return;
    }
    this._interval = interval;
    this._poll.frequency = { ...this._poll.frequency, interval };
  }

  /**
   * The names of tracked jobs that have not finished yet.
   */
  get tracked(): ReadonlySet<string> {
    return this._tracked;
  }

  /**
   * Whether the model is disposed.
   */
  get isDisposed(): boolean {
    return this._poll.isDisposed;
  }

  /**
   * A job of the list by name.
   */
  find(name: string): IJob | undefined {
    return this._jobs.find(job => job.name === name);
  }

  /**
   * Track a job: `jobFinished` is emitted when it succeeds or fails.
   */
  track(name: string): void {
    this._tracked.add(name);
    void this.refresh();
  }

  /**
   * Refresh now; resolves once the list is loaded (or failed).
   */
  async refresh(): Promise<void> {
    if (this._poll.isDisposed) {
      return;
    }
    try {
      await this._fetch();
    } catch {
      // Kept in `error`; the poll goes on with its backoff.
    }
  }

  /**
   * Stop polling.
   */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._poll.dispose();
    Signal.clearData(this);
  }

  /**
   * Load the list once and compare it with the previous one.
   */
  private async _fetch(): Promise<void> {
    let jobs: IJob[];
    try {
      jobs = await this._fetchJobs();
    } catch (reason) {
      this._error =
        reason instanceof PyTorchJobAPIError
          ? reason
          : new PyTorchJobAPIError(
              0,
              reason instanceof Error ? reason.message : String(reason)
            );
      this._changed.emit();
      throw reason;
    }
    if (this.isDisposed) {
      return;
    }
    this._error = null;
    this._loaded = true;
    this._jobs = jobs;
    const names = new Set(jobs.map(job => job.name));
    for (const job of jobs) {
      if (this._tracked.has(job.name)) {
        this._seen.add(job.name);
        if (isFinished(job.state)) {
          this._tracked.delete(job.name);
          this._seen.delete(job.name);
          this._jobFinished.emit(job);
        }
      }
    }
    for (const name of [...this._tracked]) {
      // A tracked job that was listed and is gone has been deleted.
      if (!names.has(name) && this._seen.has(name)) {
        this._tracked.delete(name);
        this._seen.delete(name);
      }
    }
    this._changed.emit();
  }

  private _fetchJobs: () => Promise<IJob[]>;
  private _poll: Poll<void, unknown, 'refresh'>;
  private _interval: number;
  private _jobs: IJob[] = [];
  private _error: PyTorchJobAPIError | null = null;
  private _loaded = false;
  private _visible = false;
  private _tracked = new Set<string>();
  private _seen = new Set<string>();
  private _changed = new Signal<this, void>(this);
  private _jobFinished = new Signal<this, IJob>(this);
}

/**
 * A namespace for `JobsModel` statics.
 */
export namespace JobsModel {
  /**
   * The options of a model.
   */
  export interface IOptions {
    /**
     * Load the list, e.g. `client.listJobs()`.
     */
    fetchJobs: () => Promise<IJob[]>;

    /**
     * Seconds between two refreshes; 5 by default.
     */
    refreshInterval?: number;
  }
}

/**
 * Module-private helpers.
 */
namespace Private {
  /**
   * The poll interval in milliseconds, between 1 s and 1 h.
   */
  export function intervalMs(seconds: number): number {
    const value = Number.isFinite(seconds) ? seconds : 5;
    return Math.round(Math.min(3600, Math.max(1, value)) * 1000);
  }

  /**
   * Whether the page is hidden (another browser tab is shown).
   */
  export function documentHidden(): boolean {
    return typeof document !== 'undefined' && document.hidden;
  }
}
