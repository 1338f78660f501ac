/**
 * The job view's Run section: what the run was (`GET jobs/{name}/run`) - its
 * hyperparameters, its checkpoints (each with *Copy path* and *Resume from
 * here*) and its artifacts.
 *
 * @packageDocumentation
 */

import { Clipboard } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';

import { PyTorchJobClient } from './api';
import { CommandIDs } from './commandids';
import { formatError, formatTime } from './format';
import { formatMetric } from './progress';
import { ICheckpoint, IRunRecord } from './tokens';

/**
 * Seconds between two loads of a running job's record (it reads the job's
 * log on the server).
 */
const RELOAD_SECONDS = 30;

/**
 * A hyperparameter's value as a cell shows it.
 */
export function formatHparam(value: unknown): string {
  if (value === null || value === undefined) {
    return '—';
  }
  if (typeof value === 'number') {
    return formatMetric(value);
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The metrics reported with a checkpoint, as `loss 0.23 · acc 0.91`.
 */
export function checkpointMetrics(checkpoint: ICheckpoint): string {
  return Object.entries(checkpoint.metrics)
    .map(([name, value]) => `${name} ${formatMetric(value)}`)
    .join(' · ');
}

/**
 * Whether a run record holds anything to show.
 */
export function isEmptyRun(run: IRunRecord): boolean {
  return (
    Object.keys(run.hparams).length === 0 &&
    run.checkpoints.length === 0 &&
    run.artifacts.length === 0
  );
}

/**
 * The Run section of one job; it loads the record itself, again when the
 * job's state changes and every `RELOAD_SECONDS` while it runs.
 */
export function RunSection(props: RunSection.IProps): JSX.Element {
  const { client, commands, name, state, running, trans } = props;
  const [run, setRun] = React.useState<IRunRecord | null>(null);
  const [error, setError] = React.useState('');
  const [copied, setCopied] = React.useState('');
  React.useEffect(() => {
    let live = true;
    const load = () =>
      // A client that cannot even ask (an old server) shows as an error too.
      Promise.resolve()
        .then(() => client.run(name))
        .then(
          record => {
            if (live) {
              setRun(record);
              setError('');
            }
          },
          reason => {
            if (live) {
              setError(formatError(reason, trans));
            }
          }
        );
    void load();
    const timer = running
      ? window.setInterval(() => void load(), RELOAD_SECONDS * 1000)
      : undefined;
    return () => {
      live = false;
      window.clearInterval(timer);
    };
  }, [client, name, state, running]);

  const copy = (path: string) => {
    Clipboard.copyToSystem(path);
    setCopied(path);
  };
  const resume = (path: string) =>
    void commands.execute(CommandIDs.cloneJob, { name, resumeFrom: path });
  const hparams = run ? Object.entries(run.hparams) : [];
  return (
    <section className="jp-PyTorchJobRun" aria-label={trans.__('Run')}>
      <h3>{trans.__('Run')}</h3>
      {error && (
        <p className="jp-PyTorchJobRun-error" role="alert">
          {error}
        </p>
      )}
      {run && isEmptyRun(run) && (
        <p className="jp-PyTorchJobRun-empty">
          {trans.__(
            'Nothing reported yet: call report(hparams=…, checkpoint=PATH, artifact=PATH) on rank 0, or let Lightning or Hugging Face write into the log directory.'
          )}
        </p>
      )}
      {hparams.length > 0 && (
        <>
          <h4>{trans.__('Hyperparameters')}</h4>
          <table
            className="jp-PyTorchJobView-table jp-PyTorchJobRun-hparams"
            aria-label={trans.__('Hyperparameters')}
          >
            <tbody>
              {hparams.map(([key, value]) => (
                <tr key={key} data-hparam={key}>
                  <th scope="row">{key}</th>
                  <td>{formatHparam(value)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {run && run.checkpoints.length > 0 && (
        <>
          <h4>{trans.__('Checkpoints')}</h4>
          <table
            className="jp-PyTorchJobView-table jp-PyTorchJobRun-checkpoints"
            aria-label={trans.__('Checkpoints')}
          >
            <thead>
              <tr>
                <th scope="col">{trans.__('Step')}</th>
                <th scope="col">{trans.__('Time')}</th>
                <th scope="col">{trans.__('Metrics')}</th>
                <th scope="col">{trans.__('Path')}</th>
                <th scope="col">
                  <span className="jp-PyTorchJobRun-hidden">
                    {trans.__('Actions')}
                  </span>
                </th>
              </tr>
            </thead>
            <tbody>
              {[...run.checkpoints].reverse().map(checkpoint => (
                <tr key={checkpoint.path} data-checkpoint={checkpoint.path}>
                  <td>{checkpoint.step ?? '—'}</td>
                  <td className="jp-PyTorchJobRun-time">
                    {formatTime(checkpoint.time)}
                  </td>
                  <td className="jp-PyTorchJobRun-metrics">
                    {checkpointMetrics(checkpoint) || '—'}
                  </td>
                  <td className="jp-PyTorchJobRun-path">
                    <code title={checkpoint.path}>{checkpoint.path}</code>
                  </td>
                  <td className="jp-PyTorchJobRun-actions">
                    <button
                      type="button"
                      className="jp-mod-styled"
                      title={trans.__('Copy the path as the job sees it')}
                      onClick={() => copy(checkpoint.path)}
                    >
                      {copied === checkpoint.path
                        ? trans.__('Copied')
                        : trans.__('Copy path')}
                    </button>
                    <button
                      type="button"
                      className="jp-mod-styled jp-mod-accept"
                      title={trans.__(
                        'Open the form of a copy of this job whose processes find this path in PTJOB_RESUME_FROM'
                      )}
                      onClick={() => resume(checkpoint.path)}
                    >
                      {trans.__('Resume from here')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {run && run.artifacts.length > 0 && (
        <>
          <h4>{trans.__('Artifacts')}</h4>
          <table
            className="jp-PyTorchJobView-table jp-PyTorchJobRun-artifacts"
            aria-label={trans.__('Artifacts')}
          >
            <tbody>
              {run.artifacts.map(artifact => (
                <tr key={artifact.name} data-artifact={artifact.name}>
                  <th scope="row">{artifact.name}</th>
                  <td className="jp-PyTorchJobRun-path">
                    <code title={artifact.path}>{artifact.path}</code>
                  </td>
                  <td className="jp-PyTorchJobRun-time">
                    {formatTime(artifact.time)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {run && run.dropped > 0 && (
        <p className="jp-PyTorchJobRun-dropped">
          {trans._n(
            '%1 reported item was left out (over a limit, or not valid).',
            '%1 reported items were left out (over a limit, or not valid).',
            run.dropped
          )}
        </p>
      )}
    </section>
  );
}

/**
 * A namespace for `RunSection` types.
 */
export namespace RunSection {
  /**
   * The properties of a Run section.
   */
  export interface IProps {
    /**
     * The REST client.
     */
    client: PyTorchJobClient;

    /**
     * The application's commands (*Resume from here* clones the job).
     */
    commands: CommandRegistry;

    /**
     * The job.
     */
    name: string;

    /**
     * Its state: a change loads the record again.
     */
    state: string;

    /**
     * Whether it runs (the record is loaded again now and then).
     */
    running: boolean;

    /**
     * The translation bundle.
     */
    trans: TranslationBundle;
  }
}
