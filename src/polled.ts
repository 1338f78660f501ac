/**
 * A list loaded from the server by a `Poll`, with backoff and standby: the
 * base of the job list and of the list of running TensorBoards.
 *
 * @packageDocumentation
 */

import { IDisposable } from '@lumino/disposable';
import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { PyTorchJobAPIError } from './request';

/**
 * A list of `T` refreshed every `refreshInterval` seconds while anybody looks.
 *
 * The poll backs off after failures (up to five minutes) and stands by while
 * `standingBy` says so (by default: the page or the list is hidden).
 */
export abstract class PolledList<T> implements IDisposable {
  /**
   * Construct a list; it starts polling at once (or stands by).
   *
   * @param name - The poll's name, for debugging.
   * @param refreshInterval - Seconds between two refreshes.
   */
  constructor(name: string, refreshInterval: number) {
    this._interval = PolledList.intervalMs(refreshInterval);
    this._poll = new Poll<void, unknown, 'refresh'>({
      name,
      factory: () => this._fetch(),
      frequency: { interval: this._interval, backoff: true, max: 300 * 1000 },
      standby: () => this.standingBy
    });
  }

  /**
   * The items of the last successful load.
   */
  get items(): readonly T[] {
    return this._items;
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
   * Emitted after every refresh (success or failure) and change.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Whether the list is shown.
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
    const interval = PolledList.intervalMs(seconds);
    if (interval === this._interval) {
      return;
    }
    this._interval = interval;
    this._poll.frequency = { ...this._poll.frequency, interval };
  }

  /**
   * Whether the model is disposed.
   */
  get isDisposed(): boolean {
    return this._poll.isDisposed;
  }

  /**
   * Refresh now; resolves once the list is loaded (or failed).
   */
  async refresh(): Promise<void> {
    if (this.isDisposed) {
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
   * Whether the poll stands by: the page or the list is hidden.
   */
  protected get standingBy(): boolean {
    return PolledList.documentHidden() || !this._visible;
  }

  /**
   * Load the items from the server; rejects on failure.
   */
  protected abstract load(): Promise<T[]>;

  /**
   * Called with the new items after a successful load, before `changed`.
   */
  protected loadedItems(_items: readonly T[]): void {
    // Nothing by default.
  }

  /**
   * Replace the items without a load (e.g. after a stop) and say so.
   */
  protected setItems(items: T[]): void {
    this._items = items;
    this._changed.emit();
  }

  private async _fetch(): Promise<void> {
    let items: T[];
    try {
      items = await this.load();
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
    this._items = items;
    this.loadedItems(items);
    this._changed.emit();
  }

  private _poll: Poll<void, unknown, 'refresh'>;
  private _interval: number;
  private _items: T[] = [];
  private _error: PyTorchJobAPIError | null = null;
  private _loaded = false;
  private _visible = false;
  private _changed = new Signal<this, void>(this);
}

/**
 * A namespace for `PolledList` statics.
 */
export namespace PolledList {
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
