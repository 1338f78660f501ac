/**
 * The comparison tab: one column per job, a row per hyperparameter that
 * differs between them and per metric, the best value of each metric marked.
 *
 * @packageDocumentation
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import * as React from 'react';

import { formatDuration, formatError, stateClass, stateLabel } from './format';
import { formatValue, parameterCells } from './comparecells';
import { formatMetric } from './progress';
import { formatHparam } from './run';
import { IComparison } from './tokens';

/**
 * How a hyperparameter's value reads in a cell: lists joined by spaces (a
 * command line), volumes as `claim:/mount`, `—` for none.
 */
export function formatParameter(value: unknown): string {
  return formatValue(value);
}

/**
 * A comparison of jobs, loaded when shown.
 */
export class ComparisonView extends ReactWidget {
  /**
   * Construct a view of some jobs; it loads at once, and again when shown.
   */
  constructor(options: ComparisonView.IOptions) {
    super();
    this.names = [...options.names];
    this._load = options.load;
    this._trans = options.trans;
    this._openTensorBoard = options.openTensorBoard;
    this.addClass('jp-PyTorchJobCompare');
    void this.refresh();
  }

  /**
   * The compared jobs, one column each.
   */
  readonly names: readonly string[];

  /**
   * The comparison, once loaded.
   */
  get comparison(): IComparison | null {
    return this._comparison;
  }

  /**
   * Load the comparison again (the jobs' latest metrics).
   */
  async refresh(): Promise<void> {
    try {
      this._comparison = await this._load(this.names);
      this._error = '';
    } catch (error) {
      this._error = formatError(error, this._trans);
    }
    this.update();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    if (this._comparison) {
      void this.refresh();
    }
  }

  protected render(): JSX.Element {
    const trans = this._trans;
    const comparison = this._comparison;
    const withLogdir = comparison?.jobs.filter(job => job.logdir) ?? [];
    const leftOut =
      comparison?.jobs.filter(job => !job.logdir).map(job => job.name) ?? [];
    const columns = (comparison?.jobs.length ?? 0) + 1;
    return (
      <div className="jp-PyTorchJobCompare-content">
        <header className="jp-PyTorchJobView-header">
          <h2 className="jp-PyTorchJobView-title">
            {trans.__('Comparing %1 jobs', this.names.length)}
          </h2>
          <div className="jp-PyTorchJobView-actions" role="toolbar">
            <button
              type="button"
              className="jp-mod-styled"
              onClick={() => void this.refresh()}
            >
              {trans.__('Refresh')}
            </button>
            <button
              type="button"
              className="jp-mod-styled jp-PyTorchJobCompare-tensorboard"
              disabled={withLogdir.length === 0}
              title={
                withLogdir.length === 0
                  ? trans.__(
                      'None of these jobs has a TensorBoard log directory'
                    )
                  : trans.__(
                      'One TensorBoard over the jobs’ log directories, a run per job'
                    )
              }
              onClick={() =>
                this._openTensorBoard(withLogdir.map(job => job.name))
              }
            >
              {trans.__('Compare in TensorBoard')}
            </button>
          </div>
        </header>
        {this._error && (
          <p className="jp-PyTorchJobView-error" role="alert">
            {this._error}
          </p>
        )}
        {withLogdir.length > 0 && leftOut.length > 0 && (
          <p className="jp-PyTorchJobCompare-leftout" role="note">
            {trans._n(
              'Compare in TensorBoard leaves out %2: it has no log directory.',
              'Compare in TensorBoard leaves out %2: they have no log directory.',
              leftOut.length,
              leftOut.join(', ')
            )}
          </p>
        )}
        {!comparison ? (
          !this._error && <p>{trans.__('Loading…')}</p>
        ) : (
          <table
            className="jp-PyTorchJobView-table jp-PyTorchJobCompare-table"
            aria-label={trans.__('Comparison')}
          >
            <thead>
              <tr>
                <th scope="col">{trans.__('Job')}</th>
                {comparison.jobs.map(job => (
                  <th scope="col" key={job.name} data-job={job.name}>
                    {job.name}{' '}
                    <span className={stateClass(job.state)}>
                      {stateLabel(job.state, trans)}
                    </span>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {(comparison.hparams ?? []).length > 0 && (
                <>
                  <tr className="jp-PyTorchJobCompare-section">
                    <th scope="rowgroup" colSpan={columns}>
                      {trans.__('Reported hyperparameters that differ')}
                    </th>
                  </tr>
                  {comparison.hparams.map(hparam => (
                    <tr key={hparam.name} data-hparam={hparam.name}>
                      <th scope="row">{hparam.name}</th>
                      {hparam.values.map((value, i) => (
                        <td key={i}>{formatHparam(value)}</td>
                      ))}
                    </tr>
                  ))}
                </>
              )}
              <tr className="jp-PyTorchJobCompare-section">
                <th scope="rowgroup" colSpan={columns}>
                  {trans.__('Job fields that differ')}
                </th>
              </tr>
              {comparison.parameters.length === 0 && (
                <tr>
                  <td colSpan={columns}>
                    {trans.__('None: the jobs have the same specification.')}
                  </td>
                </tr>
              )}
              {comparison.parameters.map(parameter => (
                <tr key={parameter.field} data-parameter={parameter.field}>
                  <th scope="row">{parameter.field}</th>
                  {parameterCells(parameter.field, parameter.values).map(
                    (cell, i) => (
                      <td key={i} title={formatValue(parameter.values[i])}>
                        {cell}
                      </td>
                    )
                  )}
                </tr>
              ))}
              <tr className="jp-PyTorchJobCompare-section">
                <th scope="rowgroup" colSpan={columns}>
                  {trans.__('Metrics (final or latest)')}
                </th>
              </tr>
              <tr data-metric="duration">
                <th scope="row">{trans.__('Duration')}</th>
                {comparison.jobs.map(job => (
                  <td key={job.name}>{formatDuration(job.duration, trans)}</td>
                ))}
              </tr>
              {comparison.metrics.map(metric => (
                <tr key={metric.name} data-metric={metric.name}>
                  <th
                    scope="row"
                    title={
                      metric.scored === false
                        ? trans.__(
                            'A hyperparameter or a setting, not a score: no best value'
                          )
                        : metric.lowerIsBetter
                          ? trans.__('Lower is better')
                          : trans.__('Higher is better')
                    }
                  >
                    {metric.name}
                    {metric.scored === false
                      ? ''
                      : metric.lowerIsBetter
                        ? ' ↓'
                        : ' ↑'}
                  </th>
                  {metric.values.map((value, i) => (
                    <td
                      key={i}
                      className={metric.best === i ? 'jp-mod-best' : ''}
                      aria-label={
                        metric.best === i
                          ? trans.__('%1 (best)', formatMetric(value))
                          : undefined
                      }
                    >
                      {formatMetric(value)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    );
  }

  private _load: (names: readonly string[]) => Promise<IComparison>;
  private _openTensorBoard: (names: string[]) => void;
  private _trans: TranslationBundle;
  private _comparison: IComparison | null = null;
  private _error = '';
}

/**
 * A namespace for `ComparisonView` types.
 */
export namespace ComparisonView {
  /**
   * The options of a comparison view.
   */
  export interface IOptions {
    /**
     * The jobs to compare, two or more.
     */
    names: readonly string[];

    /**
     * Load the comparison, e.g. `client.compare`.
     */
    load: (names: readonly string[]) => Promise<IComparison>;

    /**
     * Open one TensorBoard over these jobs.
     */
    openTensorBoard: (names: string[]) => void;

    /**
     * The translation bundle.
     */
    trans: TranslationBundle;
  }
}
