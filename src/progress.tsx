/**
 * A job's progress and metrics as the panel, the job view and the comparison
 * show them: a thin bar, the ETA, the key metric, a chart per scalar.
 *
 * The chart is ours (an SVG polyline) rather than a charting library's: one
 * line of at most 500 points (the server thins the history), two labels per
 * axis and a pointer readout, so a library would add hundreds of kilobytes to
 * the extension for a feature a few lines draw.
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
 * A metric's latest value as the script printed it (`0.0000`), else compact
 * (`formatMetric`).
 */
export function metricValue(progress: IJobProgress, name: string): string {
  return progress.metricTexts?.[name] ?? formatMetric(progress.metrics[name]);
}

/**
 * `loss 0.231`, or the empty string when the job has no metric.
 */
export function describeKeyMetric(
  progress: IJobProgress | null | undefined
): string {
  const key = keyMetric(progress);
  return key && progress ? `${key[0]} ${metricValue(progress, key[0])}` : '';
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
 * Whether a metric's values are drawn on a log scale: all positive and
 * spanning two decades or more (a loss from 10.9 to 1e-13 is otherwise a flat
 * line at zero after its first steps).
 */
export function spansDecades(values: readonly number[]): boolean {
  if (values.length < 2 || values.some(v => v <= 0)) {
    return false;
  }
  return Math.max(...values) / Math.min(...values) >= 100;
}

/**
 * The chart's geometry: the plot area inside the axis labels.
 */
const CHART = {
  width: 280,
  height: 110,
  left: 48,
  right: 8,
  top: 8,
  bottom: 18
};

/**
 * A line chart of one metric: its values by step (evenly thinned by the
 * server), on a log scale when they span decades, the lowest and highest
 * values and the first and last steps on its axes, the value under the
 * pointer (or the arrow keys) read out, and a link to the scalar in
 * TensorBoard when the job has one.
 */
export function MetricChart(props: {
  name: string;
  points: readonly IMetricPoint[];
  trans: TranslationBundle;
  openInTensorBoard?: (tag: string) => void;
  /**
   * The latest value as the script printed it, shown for the last point
   * when it is that value.
   */
  lastText?: string;
}): JSX.Element {
  const { name, points, trans, openInTensorBoard, lastText } = props;
  const [pointed, setPointed] = React.useState<number | null>(null);
  const finite = points.filter(p => isFinite(p.value));
  const values = finite.map(p => p.value);
  const log = spansDecades(values);
  const scaled = (v: number) => (log ? Math.log10(v) : v);
  const low = values.length ? Math.min(...values) : 0;
  const high = values.length ? Math.max(...values) : 0;
  const span = scaled(high) - scaled(low) || 1;
  const last = values.length ? values[values.length - 1] : null;
  const lastShown =
    lastText !== undefined && Number(lastText) === last
      ? lastText
      : formatMetric(last);
  const plotWidth = CHART.width - CHART.left - CHART.right;
  const plotHeight = CHART.height - CHART.top - CHART.bottom;
  const bottom = CHART.top + plotHeight;
  // By index rather than by time: evenly thinned points, and restarts or
  // pauses do not squeeze the curve.
  const xOf = (i: number) =>
    CHART.left +
    (finite.length > 1 ? (i * plotWidth) / (finite.length - 1) : plotWidth / 2);
  // A constant metric is a line across the middle, not along the axis.
  const yOf = (v: number) =>
    high === low
      ? CHART.top + plotHeight / 2
      : bottom - ((scaled(v) - scaled(low)) / span) * plotHeight;
  const coordinates = finite
    .map((p, i) => `${xOf(i).toFixed(1)},${yOf(p.value).toFixed(1)}`)
    .join(' ');
  const stepLabel = (i: number) => {
    const step = finite[i]?.step;
    return step === null || step === undefined
      ? trans.__('point %1', i + 1)
      : trans.__('step %1', step);
  };
  const point = (index: number) =>
    Math.max(0, Math.min(finite.length - 1, index));
  const onPointer = (event: React.MouseEvent<SVGSVGElement>) => {
    const box = event.currentTarget.getBoundingClientRect();
    if (!box.width || finite.length === 0) {
      return;
    }
    const x = ((event.clientX - box.left) / box.width) * CHART.width;
    const ratio = (x - CHART.left) / plotWidth;
    setPointed(point(Math.round(ratio * (finite.length - 1))));
  };
  const onKey = (event: React.KeyboardEvent<SVGSVGElement>) => {
    const moves: Record<string, number> = {
      ArrowLeft: (pointed ?? finite.length) - 1,
      ArrowRight: (pointed ?? -1) + 1,
      Home: 0,
      End: finite.length - 1
    };
    if (event.key in moves && finite.length > 0) {
      event.preventDefault();
      setPointed(point(moves[event.key]));
    }
  };
  const shown = pointed !== null && pointed < finite.length ? pointed : null;
  return (
    <div className="jp-PyTorchJob-sparkline" data-metric={name}>
      <span className="jp-PyTorchJob-sparklineName">
        {name}
        {log && (
          <span
            className="jp-PyTorchJob-chartScale"
            title={trans.__(
              'Log scale: the values span %1 decades',
              Math.floor(Math.log10(high / low))
            )}
          >
            {trans.__('log scale')}
          </span>
        )}
      </span>
      <svg
        className="jp-PyTorchJob-chart"
        width={CHART.width}
        height={CHART.height}
        viewBox={`0 0 ${CHART.width} ${CHART.height}`}
        role="img"
        tabIndex={0}
        aria-label={trans.__(
          '%1: %2 values, last %3',
          name,
          points.length,
          lastShown
        )}
        onMouseMove={onPointer}
        onMouseLeave={() => setPointed(null)}
        onKeyDown={onKey}
        onBlur={() => setPointed(null)}
      >
        <line
          className="jp-PyTorchJob-chartAxis"
          x1={CHART.left}
          y1={CHART.top}
          x2={CHART.left}
          y2={bottom}
        />
        <line
          className="jp-PyTorchJob-chartAxis"
          x1={CHART.left}
          y1={bottom}
          x2={CHART.width - CHART.right}
          y2={bottom}
        />
        <text
          className="jp-PyTorchJob-chartLabel"
          x={CHART.left - 4}
          y={CHART.top + 4}
          textAnchor="end"
          dominantBaseline="middle"
        >
          {formatMetric(high)}
        </text>
        <text
          className="jp-PyTorchJob-chartLabel"
          x={CHART.left - 4}
          y={bottom}
          textAnchor="end"
          dominantBaseline="middle"
        >
          {formatMetric(low)}
        </text>
        {finite.length > 0 && (
          <>
            <text
              className="jp-PyTorchJob-chartLabel"
              x={CHART.left}
              y={CHART.height - 2}
              textAnchor="start"
            >
              {stepLabel(0)}
            </text>
            <text
              className="jp-PyTorchJob-chartLabel"
              x={CHART.width - CHART.right}
              y={CHART.height - 2}
              textAnchor="end"
            >
              {stepLabel(finite.length - 1)}
            </text>
          </>
        )}
        <polyline
          points={coordinates}
          fill="none"
          stroke="var(--jp-brand-color1)"
          strokeWidth={1.5}
        />
        {shown !== null && (
          <g className="jp-PyTorchJob-chartPointer">
            <line x1={xOf(shown)} y1={CHART.top} x2={xOf(shown)} y2={bottom} />
            <circle cx={xOf(shown)} cy={yOf(finite[shown].value)} r={3} />
          </g>
        )}
      </svg>
      <span className="jp-PyTorchJob-sparklineValue" aria-live="polite">
        {shown !== null
          ? trans.__(
              '%1: %2',
              stepLabel(shown),
              formatMetric(finite[shown].value)
            )
          : lastShown}
      </span>
      {openInTensorBoard && (
        <button
          type="button"
          className="jp-PyTorchJobView-link jp-PyTorchJob-chartLink"
          title={trans.__('Open the scalar %1 in TensorBoard', name)}
          onClick={() => openInTensorBoard(name)}
        >
          {trans.__('TensorBoard')}
        </button>
      )}
    </div>
  );
}

/**
 * The points of the latest run: after the last restart, where the step went
 * back (a resumed job, a replica restarted, starts again from scratch). A
 * history without steps is kept whole.
 */
export function latestRun(
  points: readonly IMetricPoint[]
): readonly IMetricPoint[] {
  for (let i = points.length - 1; i > 0; i--) {
    const [before, after] = [points[i - 1].step, points[i].step];
    if (before !== null && after !== null && after < before) {
      return points.slice(i);
    }
  }
  return points;
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
  openInTensorBoard?: (tag: string) => void;
  suspended?: boolean;
}): JSX.Element {
  const { progress, now, trans, openInTensorBoard } = props;
  // A suspended job's ETA and last update describe a run that stopped.
  const suspended = props.suspended ?? false;
  const running = props.running && !suspended;
  const history: Record<string, readonly IMetricPoint[]> = {};
  for (const [name, points] of Object.entries(props.history)) {
    history[name] = latestRun(points);
  }
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
            <dt>{trans.__('Training')}</dt>
            <dd>{steps}</dd>
          </>
        )}
        <dt>{trans.__('Source')}</dt>
        <dd>{sourceLabel(progress.source, trans)}</dd>
        {suspended ? (
          <>
            <dt>{trans.__('Suspended')}</dt>
            <dd className="jp-PyTorchJobView-suspended">
              {trans.__(
                'as of this point; resuming starts the job again from scratch'
              )}
            </dd>
          </>
        ) : (
          <>
            <dt>{trans.__('Last update')}</dt>
            <dd>{formatAge(progress.updated, now, trans)}</dd>
          </>
        )}
      </dl>
      {names.length > 0 && (
        <div
          className="jp-PyTorchJobView-metrics"
          aria-label={trans.__('Metrics')}
        >
          {names.map(name =>
            (history[name] ?? []).length > 1 ? (
              <MetricChart
                key={name}
                name={name}
                points={history[name]}
                trans={trans}
                openInTensorBoard={openInTensorBoard}
                lastText={progress.metricTexts?.[name]}
              />
            ) : (
              <div
                key={name}
                className="jp-PyTorchJob-sparkline"
                data-metric={name}
              >
                <span className="jp-PyTorchJob-sparklineName">{name}</span>
                <span className="jp-PyTorchJob-sparklineValue">
                  {name in progress.metrics
                    ? metricValue(progress, name)
                    : formatMetric(history[name]?.[0]?.value)}
                </span>
              </div>
            )
          )}
        </div>
      )}
    </section>
  );
}
