/**
 * The list of running TensorBoards: a polled `GET tensorboards`.
 *
 * @packageDocumentation
 */

import { PathExt } from '@jupyterlab/coreutils';
import { ISignal, Signal } from '@lumino/signaling';

import { PolledList } from '../polled';
import { PyTorchJobAPIError } from '../request';
import { ITensorBoard } from '../tokens';

/**
 * The running TensorBoards of the server, refreshed while the list is shown.
 *
 * The server stops idle TensorBoards on its own, and other pages, `ptjob` or
 * `%ptjob` start and stop them too, so the list is polled rather than only
 * updated by this page's own starts and stops.
 */
export class TensorBoardsModel extends PolledList<ITensorBoard> {
  /**
   * Construct a model; it polls while the page is shown.
   */
  constructor(options: TensorBoardsModel.IOptions) {
    super('jupyter-pytorchjob:tensorboards', options.refreshInterval ?? 10);
    this._list = options.list;
    this._stop = options.stop;
  }

  /**
   * The running TensorBoards, oldest first.
   */
  get boards(): readonly ITensorBoard[] {
    return this.items;
  }

  /**
   * Emitted with the id of a TensorBoard stopped through `stop`.
   */
  get stopped(): ISignal<this, string> {
    return this._stopped;
  }

  /**
   * Stop a TensorBoard and drop it from the list; rejects with the API error.
   */
  async stop(id: string): Promise<void> {
    try {
      await this._stop(id);
    } catch (reason) {
      // Already gone (culled, stopped elsewhere): the list catches up.
      if (!(reason instanceof PyTorchJobAPIError && reason.status === 404)) {
        throw reason;
      }
    }
    this._stopped.emit(id);
    this.setItems(this.items.filter(board => board.id !== id));
  }

  /**
   * Polls while the page is shown: the list is also in JupyterLab's Running
   * panel, whose visibility this model cannot see. The answer is the server's
   * in-memory registry, so polling it costs next to nothing.
   */
  protected get standingBy(): boolean {
    return PolledList.documentHidden();
  }

  protected load(): Promise<ITensorBoard[]> {
    return this._list();
  }

  private _list: () => Promise<ITensorBoard[]>;
  private _stop: (id: string) => Promise<void>;
  private _stopped = new Signal<this, string>(this);
}

/**
 * A short name for a directory (`runs/cnn/` → `cnn`), for tab titles and lists.
 */
export function directoryLabel(path: string): string {
  return PathExt.basename(path) || path;
}

/**
 * How lists name a running TensorBoard: the jobs it was opened for, else its
 * directory.
 */
export function boardLabel(board: ITensorBoard): string {
  return board.jobs?.length
    ? board.jobs.join(', ')
    : directoryLabel(board.logdir);
}

/**
 * The arguments of `pytorchjob:open-tensorboard` that open a running
 * TensorBoard again: its job, its jobs for one over several, else its
 * directory.
 */
export function boardArgs(
  board: ITensorBoard
): { name: string } | { names: string[] } | { logdir: string } {
  const jobs = board.runs ? Object.keys(board.runs) : [];
  return jobs.length === 1
    ? { name: jobs[0] }
    : jobs.length > 1
      ? { names: jobs }
      : { logdir: board.logdir };
}

/**
 * A namespace for `TensorBoardsModel` statics.
 */
export namespace TensorBoardsModel {
  /**
   * The options of a model.
   */
  export interface IOptions {
    /**
     * Load the list, e.g. `client.listTensorBoards()`.
     */
    list: () => Promise<ITensorBoard[]>;

    /**
     * Stop one, e.g. `client.stopTensorBoard(id)`.
     */
    stop: (id: string) => Promise<void>;

    /**
     * Seconds between two refreshes while shown; 10 by default.
     */
    refreshInterval?: number;
  }
}
