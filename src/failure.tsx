/**
 * Why a job failed or waits, in one look: the panel row's line, the job
 * view's *Failure* section and *Waiting* line, the finished-job notice.
 *
 * @packageDocumentation
 */

import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { translateCoded } from './servermessages';
import { IJob, IJobFailure, IJobWaiting } from './tokens';

/**
 * The reason of a replica whose pod the clean-pod policy deleted once the job
 * ended: how it was cleaned up, never why the job ended.
 */
const CLEANED_UP = 'CleanPodPolicy';

/**
 * A failure in one line: `master-0 exited 1: ZeroDivisionError: division by
 * zero`. The exception (else the platform's reason) follows how the replica
 * ended; a signal says more than the exit code it implies.
 *
 * @param failure - The job's failure.
 * @param trans - The translation bundle.
 */
export function failureSummary(
  failure: IJobFailure,
  trans: TranslationBundle
): string {
  const what = failure.message || failure.reason;
  const replica = failure.replica;
  if (!replica) {
    return what || trans.__('Failed');
  }
  if (failure.signal) {
    return what
      ? trans.__('%1 killed by %2: %3', replica, failure.signal, what)
      : trans.__('%1 killed by %2', replica, failure.signal);
  }
  if (failure.exitCode !== null && failure.exitCode !== undefined) {
    return what
      ? trans.__('%1 exited %2: %3', replica, failure.exitCode, what)
      : trans.__('%1 exited %2', replica, failure.exitCode);
  }
  return what
    ? trans.__('%1 failed: %2', replica, what)
    : trans.__('%1 failed', replica);
}

/**
 * A waiting job in one line: its message (translated where the words are the
 * server's own), else its reason.
 */
export function waitingSummary(
  waiting: IJobWaiting,
  trans: TranslationBundle
): string {
  const { message, messageCode, messageParams } = waiting;
  return (
    translateCoded(message, messageCode, messageParams, trans) || waiting.reason
  );
}

/**
 * What to do about a failure or a wait, one sentence in the user's language;
 * empty when the server knows none.
 */
export function hintText(
  of: IJobFailure | IJobWaiting,
  trans: TranslationBundle
): string {
  return translateCoded(of.hint, of.hintCode, of.hintParams, trans);
}

/**
 * The line a panel row shows under a job, if any: why it failed, what it
 * waits for, else why a replica is not running. Nothing once it succeeded.
 */
export function explainJob(
  job: IJob,
  trans: TranslationBundle
): { text: string; title: string; kind: 'failure' | 'waiting' } | null {
  if (job.state === 'Succeeded') {
    return null;
  }
  if (job.failure) {
    return {
      text: failureSummary(job.failure, trans),
      title: hintText(job.failure, trans),
      kind: 'failure'
    };
  }
  if (job.state !== 'Failed' && job.waiting) {
    return {
      text: waitingSummary(job.waiting, trans),
      title: hintText(job.waiting, trans) || job.waiting.reason,
      kind: 'waiting'
    };
  }
  const replica = job.replicas.find(
    r =>
      r.reason &&
      r.phase !== 'Running' &&
      r.phase !== 'Succeeded' &&
      r.reason !== CLEANED_UP
  );
  return replica
    ? {
        text: `${replica.name}: ${replica.reason}`,
        title: translateCoded(
          replica.message,
          replica.messageCode,
          replica.messageParams,
          trans
        ),
        kind: 'waiting'
      }
    : null;
}

/**
 * Where a job's log viewer starts: on the previous containers when asked,
 * and by default for a failed job whose failing run is a previous
 * container's (its current run is an empty restart), saying so in one line.
 *
 * @param job - The job, if known.
 * @param previous - What the user asked for, if anything.
 * @param trans - The translation bundle.
 */
export function logStart(
  job: IJob | null | undefined,
  previous: boolean | undefined,
  trans: TranslationBundle
): { previous: boolean; why: string } {
  const failure = job?.state === 'Failed' ? job.failure : null;
  const atFailure = failure?.logSource === 'previous';
  const start = previous ?? atFailure;
  return {
    previous: start,
    why:
      start && atFailure
        ? trans.__(
            'Showing the run that failed: the previous container of %1.',
            failure!.replica
          )
        : ''
  };
}

/**
 * The job view's *Failure* section: the one-line summary, how the replica
 * ended, what to do, the last lines, and the log of the failing run.
 */
export function FailureSection(props: {
  failure: IJobFailure;
  trans: TranslationBundle;
  openLog: (failure: IJobFailure) => void;
}): JSX.Element {
  const { failure, trans, openLog } = props;
  return (
    <section
      className="jp-PyTorchJobView-failure"
      aria-label={trans.__('Failure')}
    >
      <h3>{trans.__('Failure')}</h3>
      <p className="jp-PyTorchJobView-failureSummary">
        {failureSummary(failure, trans)}
      </p>
      <dl className="jp-PyTorchJobView-facts">
        {failure.replica && (
          <>
            <dt>{trans.__('Replica')}</dt>
            <dd>
              <code>{failure.replica}</code>
            </dd>
          </>
        )}
        {failure.signal ? (
          <>
            <dt>{trans.__('Signal')}</dt>
            <dd>{failure.signal}</dd>
          </>
        ) : (
          failure.exitCode !== null &&
          failure.exitCode !== undefined && (
            <>
              <dt>{trans.__('Exit code')}</dt>
              <dd>{failure.exitCode}</dd>
            </>
          )
        )}
        {failure.reason && (
          <>
            <dt>{trans.__('Reason')}</dt>
            <dd>{failure.reason}</dd>
          </>
        )}
      </dl>
      {failure.hint && (
        <p className="jp-PyTorchJobView-hint">{hintText(failure, trans)}</p>
      )}
      {failure.tail.length > 0 && (
        <pre
          className="jp-PyTorchJobView-tail"
          tabIndex={0}
          aria-label={trans.__('Last lines of %1', failure.replica)}
        >
          {failure.tail.join('\n')}
        </pre>
      )}
      {failure.logSource ? (
        <button
          type="button"
          className="jp-mod-styled"
          title={logSourceTitle(failure, trans)}
          onClick={() => openLog(failure)}
        >
          {trans.__('Open log at this run')}
        </button>
      ) : (
        <p className="jp-PyTorchJobView-note">
          {trans.__('The log of this run is no longer kept.')}
        </p>
      )}
    </section>
  );
}

/**
 * The job view's *Waiting* line: what blocks the job, and what to do.
 */
export function WaitingLine(props: {
  waiting: IJobWaiting;
  trans: TranslationBundle;
}): JSX.Element {
  const { waiting, trans } = props;
  return (
    <div className="jp-PyTorchJobView-waiting" role="status">
      <p>
        <span title={waiting.reason}>
          {trans.__('Waiting: %1', waitingSummary(waiting, trans))}
        </span>
      </p>
      {waiting.hint && (
        <p className="jp-PyTorchJobView-hint">{hintText(waiting, trans)}</p>
      )}
    </div>
  );
}

/**
 * Where *Open log at this run* reads the log from, for its tooltip.
 */
function logSourceTitle(
  failure: IJobFailure,
  trans: TranslationBundle
): string {
  switch (failure.logSource) {
    case 'previous':
      return trans.__('The previous container’s log of %1', failure.replica);
    case 'archive':
      return trans.__('The log archive of %1', failure.replica);
    default:
      return trans.__('The log of %1', failure.replica);
  }
}
