/**
 * A job's progress and metrics as the panel, the job view and the comparison
 * show them: a thin bar, the ETA, the key metric, a sparkline per scalar.
 *
 * The sparkline is ours (an SVG polyline) rather than a charting library's:
 * one line of at most 500 points (the server thins the history), no axes,
 * legends or interaction, so a library would add hundreds of kilobytes to the
 * extension for a feature a few lines draw.
 *
 * @packageDocumentation
 */

import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { failureSummary } from './failure';
import { formatAge, formatDuration, jobDuration } from './format';
import { IJob, IJobProgress, IMetricPoint, ProgressSource } from './tokens';

/**
 * A metric value, compact: three significant digits, plain for ordinary
 * magnitudes (`0.231`, `12.3`, `4150`), exponent for tiny or huge ones
 * (`2.00e-5`).
 */
export function formatMetric(value: number | null | undefined): string {
  if (value === null || value === undefined || !isFinite(value)) {
    return '—';
  }
  const magnitude = Math.abs(value);
  if (value !== 0 && (magnitude < 1e-3 || magnitude >= 1e6)) {
    return value.toExponential(2);
  }
  if (magnitude >= 1000) {
    return String(Math.round(value));
  }
  return String(Number(value.toPrecision(3)));
}

/**
 * The metric a job shows first, with its value: the server's `keyMetric`,
 * else the first metric; null for none.
 */
export function keyMetric(
  progress: IJobProgress | null | undefined
): [string, number] | null {
  if (!progress) {
    return null;
  }
  const names = Object.keys(progress.metrics ?? {});
  const name =
    progress.keyMetric && progress.keyMetric in progress.metrics
      ? progress.keyMetric
      : names[0];
  return name === undefined ? null : [name, progress.metrics[name]];
}

/**
 * `loss 0.231`, or the empty string when the job has no metric.
 */
export function describeKeyMetric(
  progress: IJobProgress | null | undefined
): string {
  const key = keyMetric(progress);
  return key ? `${key[0]} ${formatMetric(key[1])}` : '';
}

/**
 * The notice of a finished job, naming its final key metric and how long it
 * ran when known: `ddp-3 succeeded — loss 0.231 after 12m 5s`; a failed one
 * says why instead: `ddp-3 failed: master-0 exited 1: ZeroDivisionError: …`.
 */
export function finishedNotice(job: IJob, trans: TranslationBundle): string {
  if (job.state === 'Failed' && job.failure) {
    // The error first: a toast shows 140 characters.
    return trans.__(
      'PyTorch job %1 failed: %2',
      job.name,
      failureSummary(job.failure, trans)
    );
  }
  const metric = describeKeyMetric(job.progress);
  const seconds = jobDuration(job, Date.now());
  const took = seconds === null ? '' : formatDuration(seconds, trans);
  const succeeded = job.state === 'Succeeded';
  if (metric && took) {
    return succeeded
      ? trans.__(
          'PyTorch job %1 succeeded — %2 after %3',
          job.name,
          metric,
          took
        )
      : trans.__('PyTorch job %1 failed — %2 after %3', job.name, metric, took);
  }
  if (metric) {
    return succeeded
      ? trans.__('PyTorch job %1 succeeded — %2', job.name, metric)
      : trans.__('PyTorch job %1 failed — %2', job.name, metric);
  }
  if (took) {
    return succeeded
      ? trans.__('PyTorch job %1 succeeded after %2', job.name, took)
      : trans.__('PyTorch job %1 failed after %2', job.name, took);
  }
  return succeeded
    ? trans.__('PyTorch job %1 succeeded', job.name)
    : trans.__('PyTorch job %1 failed', job.name);
}

/**
 * The percent done, clamped to 0..100; null when unknown.
 */
export function percentDone(
  progress: IJobProgress | null | undefined
): number | null {
  const percent = progress?.percent;
  if (percent === null || percent === undefined || !isFinite(percent)) {
    return null;
  }
  return Math.min(100, Math.max(0, percent));
}

/**
 * The translated name of a progress source.
 */
export function sourceLabel(
  source: ProgressSource | string,
  trans: TranslationBundle
): string {
  switch (source) {
    case 'report':
      return trans.__('reported by the job');
    case 'trainerStatus':
      return trans.__('the TrainJob’s trainer status');
    case 'logs':
      return trans.__('the job’s log');
    case 'tensorboard':
      return trans.__('TensorBoard event files');
    default:
      return source;
  }
}

/**
 * `step 450 / 1000 · epoch 1.5 / 3`, from what is known.
 */
export function describeSteps(
  progress: IJobProgress,
  trans: TranslationBundle
): string {
  const parts: string[] = [];
  if (progress.step !== null && progress.step !== undefined) {
    parts.push(
      progress.totalSteps
        ? trans.__('step %1 / %2', progress.step, progress.totalSteps)
        : trans.__('step %1', progress.step)
    );
  }
  if (progress.epoch !== null && progress.epoch !== undefined) {
    const epoch = formatMetric(progress.epoch);
    parts.push(
      progress.totalEpochs
        ? trans.__('epoch %1 / %2', epoch, formatMetric(progress.totalEpochs))
        : trans.__('epoch %1', epoch)
    );
  }
  return parts.join(' · ');
}

/**
 * A thin progress bar; indeterminate (striped) when the percent is unknown.
 */
export function ProgressBar(props: {
  percent: number | null;
  label: string;
}): JSX.Element {
  const { percent, label } = props;
  return (
    <div
      className={
        'jp-PyTorchJob-progress' +
        (percent === null ? ' jp-mod-indeterminate' : '')
      }
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={percent === null ? undefined : Math.round(percent)}
    >
      <div
        className="jp-PyTorchJob-progressFill"
        style={{ width: percent === null ? '100%' : `${percent}%` }}
      />
    </div>
  );
}

/**
 * The progress line of a job row in the panel: bar, percent and ETA while it
 * runs, the key metric always (a finished job keeps its final one).
 */
export function ProgressLine(props: {
  name: string;
  progress: IJobProgress | null | undefined;
  running: boolean;
  trans: TranslationBundle;
}): JSX.Element | null {
  const { name, progress, running, trans } = props;
  if (!progress) {
    return null;
  }
  const percent = percentDone(progress);
  const metric = describeKeyMetric(progress);
  if (!running && !metric) {
    return null;
  }
  return (
    <div className="jp-PyTorchJobPanel-progress">
      {running && (
        <>
          <ProgressBar
            percent={percent}
            label={trans.__('Progress of %1', name)}
          />
          {percent !== null && (
            <span className="jp-PyTorchJobPanel-percent">
              {Math.floor(percent)}%
            </span>
          )}
          {progress.etaSeconds !== null &&
            progress.etaSeconds !== undefined && (
              <span
                className="jp-PyTorchJobPanel-eta"
                title={trans.__('Estimated time left')}
              >
                {trans.__(
                  '%1 left',
                  formatDuration(progress.etaSeconds, trans)
                )}
              </span>
            )}
        </>
      )}
      {metric && (
        <span
          className="jp-PyTorchJobPanel-metric"
          title={running ? trans.__('Latest metric') : trans.__('Final metric')}
        >
          {metric}
        </span>
      )}
    </div>
  );
}

/**
 * A small line chart of one metric: an SVG polyline scaled to its own range,
 * with the last, lowest and highest values beside it.
 */
export function Sparkline(props: {
  name: string;
  points: readonly IMetricPoint[];
  width?: number;
  height?: number;
}): JSX.Element {
  const { name, points } = props;
  const width = props.width ?? 160;
  const height = props.height ?? 32;
  const finite = points.filter(p => isFinite(p.value));
  const values = finite.map(p => p.value);
  const low = values.length ? Math.min(...values) : 0;
  const high = values.length ? Math.max(...values) : 0;
  const span = high - low || 1;
  const last = values.length ? values[values.length - 1] : null;
  // By index rather than by time: evenly thinned points, and restarts or
  // pauses do not squeeze the curve.
  const step = finite.length > 1 ? width / (finite.length - 1) : 0;
  const coordinates = finite
    .map((p, i) => {
      const x = finite.length > 1 ? i * step : width / 2;
      const y = height - 1 - ((p.value - low) / span) * (height - 2);
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    })
    .join(' ');
  return (
    <div className="jp-PyTorchJob-sparkline" data-metric={name}>
      <span className="jp-PyTorchJob-sparklineName">{name}</span>
      <svg
        width={width}
        height={height}
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`${name}: ${points.length} values, last ${formatMetric(last)}`}
      >
        <polyline
          points={coordinates}
          fill="none"
          stroke="var(--jp-brand-color1)"
          strokeWidth={1.5}
        />
      </svg>
      <span className="jp-PyTorchJob-sparklineValue">{formatMetric(last)}</span>
      <span className="jp-PyTorchJob-sparklineRange">
        {formatMetric(low)} – {formatMetric(high)}
      </span>
    </div>
  );
}

/**
 * The job view's *Progress & metrics* section.
 */
export function ProgressSection(props: {
  progress: IJobProgress | null;
  history: Record<string, IMetricPoint[]>;
  running: boolean;
  now: number;
  trans: TranslationBundle;
}): JSX.Element {
  const { progress, history, running, now, trans } = props;
  if (!progress) {
    return (
      <section className="jp-PyTorchJobView-progress">
        <h3>{trans.__('Progress & metrics')}</h3>
        <p>
          {trans.__(
            'Nothing reported yet: the job’s own reports, its log (tqdm, Hugging Face, Lightning, “epoch N/M”) and its TensorBoard files are read as they come.'
          )}
        </p>
      </section>
    );
  }
  const percent = percentDone(progress);
  const steps = describeSteps(progress, trans);
  const names = Array.from(
    new Set([...Object.keys(progress.metrics), ...Object.keys(history)])
  );
  return (
    <section className="jp-PyTorchJobView-progress">
      <h3>{trans.__('Progress & metrics')}</h3>
      {running && (
        <ProgressBar percent={percent} label={trans.__('Progress')} />
      )}
      <dl className="jp-PyTorchJobView-facts">
        <dt>{trans.__('Progress')}</dt>
        <dd className="jp-PyTorchJobView-percent">
          {percent === null ? '—' : `${formatMetric(percent)}%`}
        </dd>
        {running && (
          <>
            <dt>{trans.__('Time left')}</dt>
            <dd className="jp-PyTorchJobView-eta">
              {formatDuration(progress.etaSeconds, trans)}
            </dd>
          </>
        )}
        {steps && (
          <>
            <dt>{trans.__('Step')}</dt>
            <dd>{steps}</dd>
          </>
        )}
        <dt>{trans.__('Source')}</dt>
        <dd>{sourceLabel(progress.source, trans)}</dd>
        <dt>{trans.__('Last update')}</dt>
        <dd>{formatAge(progress.updated, now, trans)}</dd>
      </dl>
      {names.length > 0 && (
        <div
          className="jp-PyTorchJobView-metrics"
          aria-label={trans.__('Metrics')}
        >
          {names.map(name =>
            (history[name] ?? []).length > 1 ? (
              <Sparkline key={name} name={name} points={history[name]} />
            ) : (
              <div
                key={name}
                className="jp-PyTorchJob-sparkline"
                data-metric={name}
              >
                <span className="jp-PyTorchJob-sparklineName">{name}</span>
                <span className="jp-PyTorchJob-sparklineValue">
                  {formatMetric(
                    progress.metrics[name] ?? history[name]?.[0]?.value
                  )}
                </span>
              </div>
            )
          )}
        </div>
      )}
    </section>
  );
}
