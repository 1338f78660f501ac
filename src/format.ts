/**
 * Formatting of durations, ages, states and errors, through translations.
 *
 * @packageDocumentation
 */

import { TranslationBundle } from '@jupyterlab/translation';

import { PyTorchJobAPIError } from './request';
import { translateMessage } from './servermessages';
import { IJob, JobState } from './tokens';

/**
 * Every job state, in the order of a job's life.
 */
export const JOB_STATES: readonly JobState[] = [
  'Submitted',
  'Created',
  'Running',
  'Restarting',
  'Succeeded',
  'Failed',
  'Suspended'
];

/**
 * Whether a state is final.
 */
export function isFinished(state: JobState | string): boolean {
  return state === 'Succeeded' || state === 'Failed';
}

/**
 * A duration in seconds, compact: `45s`, `3m 20s`, `2h 5m`, `3d 4h`.
 *
 * @param seconds - The duration; `null` or negative gives `—`.
 * @param trans - The translation bundle.
 */
export function formatDuration(
  seconds: number | null | undefined,
  trans: TranslationBundle
): string {
  if (seconds === null || seconds === undefined || !isFinite(seconds)) {
    return '—';
  }
  const total = Math.max(0, Math.floor(seconds));
  const d = Math.floor(total / 86400);
  const h = Math.floor((total % 86400) / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (d > 0) {
    return trans.__('%1d %2h', d, h);
  }
  if (h > 0) {
    return trans.__('%1h %2m', h, m);
  }
  if (m > 0) {
    return trans.__('%1m %2s', m, s);
  }
  return trans.__('%1s', s);
}

/**
 * How long ago something happened, coarse: `just now`, `5m ago`, `2h ago`, `3d ago`.
 *
 * @param epoch - When, in seconds since the epoch.
 * @param now - Now, in milliseconds since the epoch.
 * @param trans - The translation bundle.
 */
export function formatAge(
  epoch: number | null | undefined,
  now: number,
  trans: TranslationBundle
): string {
  if (epoch === null || epoch === undefined) {
    return '—';
  }
  const seconds = Math.floor(now / 1000 - epoch);
  if (seconds < 10) {
    return trans.__('just now');
  }
  if (seconds < 60) {
    return trans.__('%1s ago', seconds);
  }
  if (seconds < 3600) {
    return trans.__('%1m ago', Math.floor(seconds / 60));
  }
  if (seconds < 86400) {
    return trans.__('%1h ago', Math.floor(seconds / 3600));
  }
  return trans.__('%1d ago', Math.floor(seconds / 86400));
}

/**
 * A date and time in the locale of JupyterLab's interface.
 */
export function formatTime(epoch: number | null | undefined): string {
  if (epoch === null || epoch === undefined) {
    return '—';
  }
  // The locale JupyterLab shows (its <html lang>, as its own Time.format
  // reads it), not the browser's: Chinese dates in a Chinese UI.
  const lang = document.documentElement.lang || undefined;
  return new Intl.DateTimeFormat(lang, {
    dateStyle: 'short',
    timeStyle: 'medium'
  }).format(new Date(epoch * 1000));
}

/**
 * The duration of a job: from start to finish, or to now while it runs.
 *
 * @param job - The job.
 * @param now - Now, in milliseconds since the epoch.
 */
export function jobDuration(job: IJob, now: number): number | null {
  if (job.started === null || job.started === undefined) {
    return null;
  }
  const end = job.finished ?? now / 1000;
  return Math.max(0, end - job.started);
}

/**
 * The translated label of a job state.
 */
export function stateLabel(state: string, trans: TranslationBundle): string {
  switch (state) {
    case 'Submitted':
      return trans.__('Submitted');
    case 'Created':
      return trans.__('Created');
    case 'Running':
      return trans.__('Running');
    case 'Restarting':
      return trans.__('Restarting');
    case 'Succeeded':
      return trans.__('Succeeded');
    case 'Failed':
      return trans.__('Failed');
    case 'Suspended':
      return trans.__('Suspended');
    default:
      return state;
  }
}

/**
 * The translated label of a replica phase.
 */
export function phaseLabel(phase: string, trans: TranslationBundle): string {
  switch (phase) {
    case 'Pending':
      return trans.__('Pending');
    case 'Running':
      return trans.__('Running');
    case 'Succeeded':
      return trans.__('Succeeded');
    case 'Failed':
      return trans.__('Failed');
    case 'Unknown':
      return trans.__('Unknown');
    case 'Deleted':
      return trans.__('Deleted');
    default:
      return phase;
  }
}

/**
 * The CSS modifier class of a state or phase badge.
 */
export function stateClass(state: string): string {
  return `jp-PyTorchJob-badge jp-mod-${state.toLowerCase()}`;
}

/**
 * "3 nodes = 1 master + 2 workers" (a TrainJob's: "3 nodes: node-0 leads").
 *
 * @param nodes - The number of nodes.
 * @param trans - The translation bundle.
 * @param kind - The job's kind: a TrainJob has no master.
 */
export function describeNodes(
  nodes: number,
  trans: TranslationBundle,
  kind = 'PyTorchJob'
): string {
  if (kind === 'TrainJob') {
    // No Master: every node is alike, node-0 leads the rendezvous.
    return !Number.isInteger(nodes) || nodes < 1
      ? trans.__('At least 1 node: node-0 leads')
      : trans._n('%1 node: node-0 leads', '%1 nodes: node-0 leads', nodes);
  }
  if (!Number.isInteger(nodes) || nodes < 1) {
    return trans.__('At least 1 node: node 0 is the master');
  }
  if (nodes === 1) {
    return trans.__('1 node = 1 master');
  }
  return trans._n(
    '%2 nodes = 1 master + %1 worker',
    '%2 nodes = 1 master + %1 workers',
    nodes - 1,
    nodes
  );
}

/**
 * A message for an error of the API, for people.
 *
 * @param error - The error.
 * @param trans - The translation bundle.
 */
export function formatError(error: unknown, trans: TranslationBundle): string {
  if (!(error instanceof PyTorchJobAPIError)) {
    return error instanceof Error ? error.message : String(error);
  }
  if (error.status === 0) {
    return trans.__('Cannot reach the Jupyter server: %1', error.message);
  }
  if (error.status === 404 && error.message === 'Not Found') {
    return trans.__(
      'The jupyter_pytorchjob server extension is not enabled (HTTP 404). Run `jupyter server extension enable jupyter_pytorchjob` and restart JupyterLab.'
    );
  }
  if (error.status >= 500) {
    return trans.__(
      'Server error (HTTP %1): %2',
      error.status,
      translateMessage(error.problem, trans)
    );
  }
  return translateMessage(error.problem, trans);
}
