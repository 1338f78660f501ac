/**
 * The job view: state, conditions, replicas, events and the job's actions.
 *
 * @packageDocumentation
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import { Message } from '@lumino/messaging';
import { Poll } from '@lumino/polling';
import * as React from 'react';

import { PyTorchJobClient } from './api';
import { CommandIDs } from './commandids';
import {
  formatAge,
  formatDuration,
  formatError,
  formatTime,
  isFinished,
  jobDuration,
  phaseLabel,
  stateClass,
  stateLabel
} from './format';
import { FailureSection, WaitingLine } from './failure';
import { ProgressSection } from './progress';
import { RunSection } from './run';
import { translateCoded } from './servermessages';
import { SpecSection } from './spec';
import {
  IJob,
  IJobEvent,
  IJobFailure,
  IJobTensorBoard,
  IMetricPoint,
  IReplica
} from './tokens';

/**
 * The kind of a job that does not say (every local job is one): an object kind, not text.
 */
const PYTORCHJOB = 'PyTorchJob';

/**
 * The details of one job, refreshed while it is shown.
 */
export class JobView extends ReactWidget {
  /**
   * Construct a view; it loads the job at once.
   */
  constructor(options: JobView.IOptions) {
    super();
    this.jobName = options.name;
    this._client = options.client;
    this._commands = options.commands;
    this._trans = options.trans;
    this.addClass('jp-PyTorchJobView');
    this._poll = new Poll({
      name: `jupyter-pytorchjob:job:${options.name}`,
      factory: () => this.refresh(),
      frequency: {
        interval: (options.refreshInterval ?? 5) * 1000,
        backoff: true,
        max: 300 * 1000
      },
      standby: () =>
        !this.isVisible ||
        (this._job !== null && isFinished(this._job.state) && this._final)
    });
  }

  /**
   * The job's name.
   */
  readonly jobName: string;

  /**
   * The job, once loaded.
   */
  get job(): IJob | null {
    return this._job;
  }

  /**
   * Reload the job and its events.
   */
  async refresh(): Promise<void> {
    try {
      const [job, events, history] = await Promise.all([
        this._client.getJob(this.jobName),
        this._client.events(this.jobName).catch(() => this._events),
        // The chart keeps its last history when this one request fails.
        this._client
          .progress(this.jobName)
          .then(detail => detail.history)
          .catch(() => this._history)
      ]);
      // Once finished, one more refresh catches the last events, then stop.
      this._final = this._job !== null && isFinished(this._job.state);
      this._job = job;
      if (
        (this._pending === 'suspend' && job.state === 'Suspended') ||
        (this._pending === 'resume' && job.state !== 'Suspended') ||
        isFinished(job.state)
      ) {
        this._pending = null;
      }
      this._askTensorBoard(job);
      this._events = events;
      this._history = history;
      this._error = '';
    } catch (error) {
      this._error = formatError(error, this._trans);
      this.update();
      throw error;
    }
    this.update();
  }

  /**
   * Show that a suspend or resume was asked for, until the job's state says it
   * happened (the operator, or the local supervisor, takes a moment).
   */
  setPending(action: 'suspend' | 'resume' | null): void {
    this._pending = action;
    this.update();
  }

  dispose(): void {
    this._poll.dispose();
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this._poll.refresh();
  }

  protected render(): JSX.Element {
    const trans = this._trans;
    const job = this._job;
    const name = this.jobName;
    const run = (id: string) => {
      void this._commands.execute(id, { name });
    };
    const now = Date.now();
    const board = this._tensorBoard;
    // Why TensorBoard cannot open the job's log directory, in the user's language.
    const tensorBoardProblem = board?.problem
      ? translateCoded(
          board.problem,
          board.problemCode,
          board.problemParams,
          trans
        )
      : null;
    return (
      <div className="jp-PyTorchJobView-content">
        <header className="jp-PyTorchJobView-header">
          <h2 className="jp-PyTorchJobView-title">{name}</h2>
          {job && (
            <span
              className={stateClass(job.state)}
              role="status"
              aria-label={trans.__('State: %1', stateLabel(job.state, trans))}
            >
              {stateLabel(job.state, trans)}
            </span>
          )}
          <div
            className="jp-PyTorchJobView-actions"
            role="toolbar"
            aria-label={trans.__('Job actions')}
          >
            <button
              type="button"
              className="jp-mod-styled"
              onClick={() => run(CommandIDs.openLogs)}
            >
              {trans.__('Logs')}
            </button>
            <button
              type="button"
              className="jp-mod-styled"
              title={
                job && !job.logdir
                  ? trans.__('The job has no TensorBoard log directory')
                  : tensorBoardProblem
                    ? tensorBoardProblem
                    : trans.__('Open TensorBoard on the job’s log directory')
              }
              disabled={!job || !job.logdir || !!tensorBoardProblem}
              onClick={() => run(CommandIDs.openTensorBoard)}
            >
              {trans.__('TensorBoard')}
            </button>
            <button
              type="button"
              className="jp-mod-styled"
              onClick={() => run(CommandIDs.cloneJob)}
            >
              {trans.__('Clone & edit')}
            </button>
            {this._pending ? (
              <button
                type="button"
                className="jp-mod-styled jp-PyTorchJobView-pending"
                disabled
                aria-busy="true"
              >
                {this._pending === 'suspend'
                  ? trans.__('Suspending…')
                  : trans.__('Resuming…')}
              </button>
            ) : job && job.state === 'Suspended' ? (
              <button
                type="button"
                className="jp-mod-styled"
                title={trans.__('Start the job’s replicas again, from scratch')}
                onClick={() => run(CommandIDs.resumeJob)}
              >
                {trans.__('Resume')}
              </button>
            ) : (
              job &&
              !isFinished(job.state) && (
                <button
                  type="button"
                  className="jp-mod-styled"
                  title={trans.__(
                    'Stop the job’s replicas and keep the job, to resume it later'
                  )}
                  onClick={() => run(CommandIDs.suspendJob)}
                >
                  {trans.__('Suspend')}
                </button>
              )
            )}
            <button
              type="button"
              className="jp-mod-styled jp-mod-warn"
              onClick={() => run(CommandIDs.deleteJob)}
            >
              {trans.__('Delete')}
            </button>
          </div>
        </header>
        {this._error && (
          <p className="jp-PyTorchJobView-error" role="alert">
            {this._error}
          </p>
        )}
        {!job ? (
          !this._error && <p>{trans.__('Loading…')}</p>
        ) : (
          <>
            {job.failure && (
              <FailureSection
                failure={job.failure}
                trans={trans}
                openLog={this._openFailingRun}
              />
            )}
            {job.waiting && !isFinished(job.state) && (
              <WaitingLine waiting={job.waiting} trans={trans} />
            )}
            {/* Once: a job no operator picked up waits for that message. */}
            {job.message && job.message !== job.waiting?.message && (
              <p className="jp-PyTorchJobView-message" role="status">
                {translateCoded(
                  job.message,
                  job.messageCode,
                  job.messageParams,
                  trans
                )}
              </p>
            )}
            <dl className="jp-PyTorchJobView-facts">
              <dt>{trans.__('Created')}</dt>
              <dd>
                {formatTime(job.created)} ({formatAge(job.created, now, trans)})
              </dd>
              <dt>{trans.__('Duration')}</dt>
              <dd>{formatDuration(jobDuration(job, now), trans)}</dd>
              <dt>{trans.__('Kind')}</dt>
              <dd>{job.kind ?? PYTORCHJOB}</dd>
              <dt>{trans.__('Nodes')}</dt>
              <dd>
                {trans._n('%1 node', '%1 nodes', job.nodes)}
                {job.gpus > 0 &&
                  ' · ' +
                    trans._n('%1 GPU per node', '%1 GPUs per node', job.gpus)}
              </dd>
              {job.namespace && (
                <>
                  <dt>{trans.__('Namespace')}</dt>
                  <dd>{job.namespace}</dd>
                </>
              )}
              {job.logdir && (
                <>
                  <dt>{trans.__('Log directory')}</dt>
                  <dd>
                    <code>{job.logdir}</code>
                    {tensorBoardProblem && (
                      <p
                        className="jp-PyTorchJobView-tensorBoardProblem"
                        role="note"
                      >
                        {trans.__(
                          'TensorBoard cannot open it: %1',
                          tensorBoardProblem
                        )}
                      </p>
                    )}
                  </dd>
                </>
              )}
            </dl>
            <SpecSection job={job} trans={trans} />
            <ProgressSection
              progress={job.progress ?? null}
              history={this._history}
              running={!isFinished(job.state)}
              suspended={job.state === 'Suspended'}
              now={now}
              trans={trans}
              openInTensorBoard={
                job.logdir && !tensorBoardProblem
                  ? tag =>
                      void this._commands.execute(CommandIDs.openTensorBoard, {
                        name,
                        tag
                      })
                  : undefined
              }
            />
            <RunSection
              client={this._client}
              commands={this._commands}
              name={name}
              state={job.state}
              running={!isFinished(job.state)}
              trans={trans}
            />
            <h3>{trans.__('Replicas')}</h3>
            <table className="jp-PyTorchJobView-table jp-PyTorchJobView-replicas">
              <thead>
                <tr>
                  <th scope="col">{trans.__('Replica')}</th>
                  <th scope="col">{trans.__('Phase')}</th>
                  <th scope="col">{trans.__('Restarts')}</th>
                  <th scope="col">{trans.__('Exit code')}</th>
                  <th scope="col">{trans.__('Reason')}</th>
                  <th scope="col">{trans.__('Message')}</th>
                </tr>
              </thead>
              <tbody>
                {job.replicas.map(shown => {
                  const replica = withFailure(shown, job.failure);
                  return (
                    <tr key={replica.name} data-replica={replica.name}>
                      <td>
                        <button
                          type="button"
                          className="jp-PyTorchJobView-link"
                          title={trans.__('Logs of %1', replica.name)}
                          onClick={() =>
                            void this._commands.execute(CommandIDs.openLogs, {
                              name,
                              replica: replica.name
                            })
                          }
                        >
                          {replica.name}
                        </button>
                      </td>
                      <td>
                        <span className={stateClass(replica.phase)}>
                          {phaseLabel(replica.phase, trans)}
                        </span>
                      </td>
                      <td>{replica.restarts}</td>
                      <td>{replica.exitCode ?? ''}</td>
                      <td>{replica.reason ?? ''}</td>
                      <td className="jp-PyTorchJobView-message">
                        {translateCoded(
                          replica.message,
                          replica.messageCode,
                          replica.messageParams,
                          trans
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
            <h3>{trans.__('Conditions')}</h3>
            {(job.conditions ?? []).length === 0 ? (
              <p>{trans.__('None yet.')}</p>
            ) : (
              <table className="jp-PyTorchJobView-table">
                <thead>
                  <tr>
                    <th scope="col">{trans.__('Type')}</th>
                    <th scope="col">{trans.__('Status')}</th>
                    <th scope="col">{trans.__('Reason')}</th>
                    <th scope="col">{trans.__('Message')}</th>
                    <th scope="col">{trans.__('Since')}</th>
                  </tr>
                </thead>
                <tbody>
                  {(job.conditions ?? []).map((c, i) => (
                    <tr key={i}>
                      <td>{c.type}</td>
                      <td>{c.status}</td>
                      <td>{c.reason}</td>
                      <td className="jp-PyTorchJobView-message">{c.message}</td>
                      <td>{formatTime(c.lastTransition)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <h3>{trans.__('Events')}</h3>
            {this._events.length === 0 ? (
              <p>{trans.__('None yet.')}</p>
            ) : (
              <table className="jp-PyTorchJobView-table jp-PyTorchJobView-events">
                <thead>
                  <tr>
                    <th scope="col">{trans.__('Time')}</th>
                    <th scope="col">{trans.__('Type')}</th>
                    <th scope="col">{trans.__('Object')}</th>
                    <th scope="col">{trans.__('Reason')}</th>
                    <th scope="col">{trans.__('Message')}</th>
                  </tr>
                </thead>
                <tbody>
                  {this._events.map((e, i) => (
                    <tr
                      key={i}
                      className={e.type === 'Warning' ? 'jp-mod-warning' : ''}
                    >
                      <td>{formatTime(e.time)}</td>
                      <td>{e.type}</td>
                      <td>{e.object}</td>
                      <td>{e.reason}</td>
                      <td className="jp-PyTorchJobView-message">
                        {e.message}
                        {e.count > 1 ? ` (×${e.count})` : ''}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        )}
      </div>
    );
  }

  /**
   * Open the log viewer on the replica that failed, at the run that failed.
   */
  private _openFailingRun = (failure: IJobFailure): void => {
    void this._commands.execute(CommandIDs.openLogs, {
      name: this.jobName,
      ...(failure.replica ? { replica: failure.replica } : {}),
      previous: failure.logSource === 'previous'
    });
  };

  /**
   * Ask once per log directory whether TensorBoard can open it: the answer
   * disables the button and says why in the view, not only in a tooltip.
   */
  private _askTensorBoard(job: IJob): void {
    const logdir = job.logdir ?? null;
    if (logdir === this._tensorBoardAskedFor) {
      return;
    }
    this._tensorBoardAskedFor = logdir;
    this._tensorBoard = null;
    if (!logdir) {
      return;
    }
    this._client
      .jobTensorBoard(this.jobName)
      .then(answer => {
        if (this._tensorBoardAskedFor === logdir && !this.isDisposed) {
          this._tensorBoard = answer;
          this.update();
        }
      })
      .catch(() => {
        // Unknown: the button stays, and a click says what the server says.
        this._tensorBoardAskedFor = null;
      });
  }

  private _client: PyTorchJobClient;
  private _commands: CommandRegistry;
  private _trans: TranslationBundle;
  private _poll: Poll;
  private _job: IJob | null = null;
  private _events: IJobEvent[] = [];
  private _history: Record<string, IMetricPoint[]> = {};
  private _error = '';
  private _final = false;
  private _pending: 'suspend' | 'resume' | null = null;
  private _tensorBoard: IJobTensorBoard | null = null;
  private _tensorBoardAskedFor: string | null = null;
}

/**
 * The replica as its row shows it: the one that failed first says how it
 * ended, not how it was cleaned up (`Deleted · CleanPodPolicy`).
 */
export function withFailure(
  replica: IReplica,
  failure: IJobFailure | null | undefined
): IReplica {
  if (!failure || failure.replica !== replica.name) {
    return replica;
  }
  return {
    ...replica,
    exitCode: failure.exitCode ?? replica.exitCode,
    reason: failure.reason || replica.reason,
    ...(failure.message
      ? { message: failure.message, messageCode: null, messageParams: null }
      : {})
  };
}

/**
 * A namespace for `JobView` types.
 */
export namespace JobView {
  /**
   * The options of a job view.
   */
  export interface IOptions {
    /**
     * The job.
     */
    name: string;

    /**
     * The REST client.
     */
    client: PyTorchJobClient;

    /**
     * The application's commands.
     */
    commands: CommandRegistry;

    /**
     * The translation bundle.
     */
    trans: TranslationBundle;

    /**
     * Seconds between refreshes.
     */
    refreshInterval?: number;
  }
}
