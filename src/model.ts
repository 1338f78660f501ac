/**
 * The job list model: a polled `GET jobs` that tells when tracked jobs finish.
 *
 * @packageDocumentation
 */

import { ISignal, Signal } from '@lumino/signaling';

import { isFinished } from './format';
import { PolledList } from './polled';
import { IJob } from './tokens';

/**
 * The list of jobs, refreshed while anybody looks at it.
 *
 * The poll backs off after failures (up to five minutes) and stands by while
 * the page is hidden, or while the panel is hidden and no job submitted from
 * this page is still running.
 */
export class JobsModel extends PolledList<IJob> {
  /**
   * Construct a model; it starts polling at once.
   */
  constructor(options: JobsModel.IOptions) {
    super('jupyter-pytorchjob:jobs', options.refreshInterval ?? 5);
    this._fetchJobs = options.fetchJobs;
  }

  /**
   * The jobs, newest first.
   */
  get jobs(): readonly IJob[] {
    return this.items;
  }

  /**
   * Emitted when a tracked job (one submitted from this page) finishes.
   */
  get jobFinished(): ISignal<this, IJob> {
    return this._jobFinished;
  }

  /**
   * The names of tracked jobs that have not finished yet.
   */
  get tracked(): ReadonlySet<string> {
    return this._tracked;
  }

  /**
   * A job of the list by name.
   */
  find(name: string): IJob | undefined {
    return this.items.find(job => job.name === name);
  }

  /**
   * The jobs selected in the panel (to compare them), in list order.
   */
  get selected(): string[] {
    return this.items
      .filter(job => this._selected.has(job.name))
      .map(job => job.name);
  }

  /**
   * Whether a job is selected.
   */
  isSelected(name: string): boolean {
    return this._selected.has(name);
  }

  /**
   * Select or unselect a job (the panel's check boxes).
   */
  setSelected(name: string, selected: boolean): void {
    if (selected === this._selected.has(name)) {
      return;
    }
    if (selected) {
      this._selected.add(name);
    } else {
      this._selected.delete(name);
    }
    this.setItems([...this.items]);
  }

  /**
   * Track a job: `jobFinished` is emitted when it succeeds or fails.
   */
  track(name: string): void {
    this._tracked.add(name);
    void this.refresh();
  }

  /**
   * Polls on while a tracked job runs, even with the panel hidden.
   */
  protected get standingBy(): boolean {
    return (
      PolledList.documentHidden() || (!this.visible && this._tracked.size === 0)
    );
  }

  protected load(): Promise<IJob[]> {
    return this._fetchJobs();
  }

  /**
   * Compare the new list with the tracked jobs.
   */
  protected loadedItems(jobs: readonly IJob[]): void {
    const names = new Set(jobs.map(job => job.name));
    // A deleted job leaves the selection.
    for (const name of [...this._selected]) {
      if (!names.has(name)) {
        this._selected.delete(name);
      }
    }
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
  }

  private _fetchJobs: () => Promise<IJob[]>;
  private _tracked = new Set<string>();
  private _selected = new Set<string>();
  private _seen = new Set<string>();
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
