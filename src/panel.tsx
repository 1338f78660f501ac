/**
 * The "PyTorch Jobs" side panel: the job list with live states.
 *
 * @packageDocumentation
 */

import { TranslationBundle } from '@jupyterlab/translation';
import {
  addIcon,
  closeIcon,
  filterIcon,
  ReactWidget,
  refreshIcon,
  tableRowsIcon,
  ToolbarButtonComponent
} from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import { Message } from '@lumino/messaging';
import * as React from 'react';

import { Choice } from './choice';
import { CommandIDs } from './commandids';
import {
  formatAge,
  formatDuration,
  formatError,
  isFinished,
  jobDuration,
  stateClass,
  stateLabel
} from './format';
import { explainJob } from './failure';
import { pytorchIcon } from './icons';
import { JobsModel } from './model';
import { ProgressLine } from './progress';
import { TensorBoardList } from './tensorboard/list';
import { boardArgs, TensorBoardsModel } from './tensorboard/model';
import { IConfig, IJob } from './tokens';

/**
 * The side panel listing PyTorch jobs.
 */
export class JobsPanel extends ReactWidget {
  /**
   * Construct a panel showing a model.
   */
  constructor(options: JobsPanel.IOptions) {
    super();
    this.model = options.model;
    this._commands = options.commands;
    this._trans = options.trans;
    this.id = JobsPanel.ID;
    this.addClass('jp-PyTorchJobPanel');
    this.title.icon = pytorchIcon;
    this.title.caption = this._trans.__('PyTorch Jobs');
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', this._trans.__('PyTorch Jobs'));
    this.model.changed.connect(() => this.update(), this);
    this.tensorboards = options.tensorboards ?? null;
    this.tensorboards?.changed.connect(() => this.update(), this);
  }

  /**
   * The job list.
   */
  readonly model: JobsModel;

  /**
   * The running TensorBoards, listed below the jobs.
   */
  readonly tensorboards: TensorBoardsModel | null;

  /**
   * The server's configuration, once known (shown in the footer).
   */
  get config(): IConfig | null {
    return this._config;
  }
  set config(value: IConfig | null) {
    this._config = value;
    this.update();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._setVisible(true);
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this._setVisible(false);
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._setVisible(this.isVisible);
  }

  /**
   * Tell the lists whether they are shown (they refresh when shown).
   */
  private _setVisible(value: boolean): void {
    this.model.visible = value;
    if (this.tensorboards) {
      this.tensorboards.visible = value;
    }
  }

  protected render(): JSX.Element {
    const trans = this._trans;
    const model = this.model;
    const commands = this._commands;
    const now = Date.now();
    const run = (id: string, args: Record<string, string> = {}) => {
      void commands.execute(id, args);
    };
    const selected = model.selected;
    const jobs = filterJobs(model.jobs, this._filter);
    return (
      <div className="jp-PyTorchJobPanel-content">
        <div className="jp-PyTorchJobPanel-top">
          <header className="jp-PyTorchJobPanel-header">
            <h2
              className="jp-PyTorchJobPanel-title"
              title={trans.__('PyTorch Jobs')}
            >
              {trans.__('PyTorch Jobs')}
            </h2>
          </header>
          {/* JupyterLab's toolbar buttons, as the Running panel has them: icons
            with tooltips, labels only where they fit at the default width. */}
          <div
            className="jp-Toolbar jp-PyTorchJobPanel-toolbar"
            role="toolbar"
            aria-label={trans.__('Job actions')}
          >
            <div className="jp-Toolbar-item">
              <ToolbarButtonComponent
                className="jp-PyTorchJobPanel-new"
                icon={addIcon}
                label={trans.__('New job')}
                tooltip={trans.__('Create a new PyTorch job')}
                onClick={() => run(CommandIDs.newJob)}
              />
            </div>
            {selected.length >= 2 && (
              <div className="jp-Toolbar-item">
                <ToolbarButtonComponent
                  className="jp-PyTorchJobPanel-compare"
                  icon={tableRowsIcon}
                  label={trans.__('Compare (%1)', selected.length)}
                  tooltip={trans.__('Compare the selected jobs')}
                  onClick={() =>
                    void commands.execute(CommandIDs.compareJobs, {
                      names: selected
                    })
                  }
                />
              </div>
            )}
            <span className="jp-Toolbar-spacer jp-Toolbar-item" />
            <div className="jp-Toolbar-item">
              <ToolbarButtonComponent
                className="jp-PyTorchJobPanel-filterToggle"
                icon={filterIcon}
                tooltip={trans.__('Filter and sort the jobs')}
                pressed={this._filtering}
                onClick={() => {
                  this._filtering = !this._filtering;
                  if (!this._filtering) {
                    this._filter = { ...JobsPanel.NO_FILTER };
                  }
                  this.update();
                }}
              />
            </div>
            <div className="jp-Toolbar-item">
              <ToolbarButtonComponent
                className="jp-PyTorchJobPanel-refresh"
                icon={refreshIcon}
                tooltip={trans.__('Refresh')}
                onClick={() => void model.refresh()}
              />
            </div>
          </div>
        </div>
        {this._filtering && (
          <JobFilterBar
            filter={this._filter}
            jobs={model.jobs}
            trans={trans}
            change={patch => {
              this._filter = { ...this._filter, ...patch };
              this.update();
            }}
          />
        )}
        {model.error && (
          <p className="jp-PyTorchJobPanel-error" role="alert">
            {formatError(model.error, trans)}
          </p>
        )}
        {!model.loaded && !model.error ? (
          <p className="jp-PyTorchJobPanel-empty">{trans.__('Loading…')}</p>
        ) : model.jobs.length === 0 && !model.error ? (
          <p className="jp-PyTorchJobPanel-empty">
            {trans.__('No jobs yet. Create one with “New job”.')}
          </p>
        ) : (
          <ul className="jp-PyTorchJobPanel-list" aria-label={trans.__('Jobs')}>
            {jobs.length === 0 && (
              <li className="jp-PyTorchJobPanel-empty">
                {trans.__('No job matches the filter.')}
              </li>
            )}
            {jobs.slice(0, this._rows).map(job => (
              <JobItem
                key={job.name}
                job={job}
                now={now}
                trans={trans}
                run={run}
                selected={model.isSelected(job.name)}
                select={on => model.setSelected(job.name, on)}
              />
            ))}
            {jobs.length > this._rows && (
              // Keyed by the rows shown: mounted anew after each page, so the
              // observer reports it again if it is still in view.
              <li
                key={`more-${this._rows}`}
                className="jp-PyTorchJobPanel-more"
                ref={this._observeMore}
              >
                <button
                  type="button"
                  className="jp-PyTorchJobPanel-link"
                  onClick={this._showMore}
                >
                  {trans.__(
                    'Show more (%1 of %2 shown)',
                    this._rows,
                    jobs.length
                  )}
                </button>
              </li>
            )}
          </ul>
        )}
        {this.tensorboards && (
          <TensorBoardList
            model={this.tensorboards}
            now={now}
            trans={trans}
            open={board =>
              void commands.execute(
                CommandIDs.openTensorBoard,
                boardArgs(board)
              )
            }
            stop={board => run(CommandIDs.stopTensorBoard, { id: board.id })}
          />
        )}
        {this._config && (
          <footer className="jp-PyTorchJobPanel-footer">
            {trans.__('Backend: %1', this._config.backend)}
          </footer>
        )}
      </div>
    );
  }

  dispose(): void {
    this._moreObserver?.disconnect();
    super.dispose();
  }

  /**
   * Render another page of rows.
   */
  private _showMore = (): void => {
    this._rows += JobsPanel.ROWS_PER_PAGE;
    this.update();
  };

  /**
   * Show more rows as soon as the end of the list scrolls into view (where the
   * browser has an IntersectionObserver; the button works everywhere).
   */
  private _observeMore = (node: HTMLLIElement | null): void => {
    if (typeof IntersectionObserver === 'undefined') {
      return;
    }
    if (!this._moreObserver) {
      this._moreObserver = new IntersectionObserver(entries => {
        if (entries.some(entry => entry.isIntersecting)) {
          this._showMore();
        }
      });
    }
    this._moreObserver.disconnect();
    if (node) {
      this._moreObserver.observe(node);
    }
  };

  private _commands: CommandRegistry;
  private _trans: TranslationBundle;
  private _config: IConfig | null = null;
  private _rows = JobsPanel.ROWS_PER_PAGE;
  private _filtering = false;
  private _filter: JobsPanel.IFilter = { ...JobsPanel.NO_FILTER };
  private _moreObserver: IntersectionObserver | null = null;
}

/**
 * The jobs a filter keeps, in its order: the name containing its text (any
 * case), of its state and kind when it names one; newest first (the server's
 * order), oldest first, by name or by state.
 */
export function filterJobs(
  jobs: readonly IJob[],
  filter: JobsPanel.IFilter
): IJob[] {
  const text = filter.text.trim().toLowerCase();
  const kept = jobs.filter(
    job =>
      (!text || job.name.toLowerCase().includes(text)) &&
      (!filter.state || job.state === filter.state) &&
      (!filter.kind || (job.kind ?? 'PyTorchJob') === filter.kind)
  );
  switch (filter.sort) {
    case 'oldest':
      return kept.reverse();
    case 'name':
      return kept.sort((a, b) => a.name.localeCompare(b.name));
    case 'state':
      return kept.sort(
        (a, b) => a.state.localeCompare(b.state) || a.name.localeCompare(b.name)
      );
    default:
      return kept;
  }
}

/**
 * The filter bar under the toolbar: name, state, kind, order.
 */
function JobFilterBar(props: {
  filter: JobsPanel.IFilter;
  jobs: readonly IJob[];
  trans: TranslationBundle;
  change: (patch: Partial<JobsPanel.IFilter>) => void;
}): JSX.Element {
  const { filter, jobs, trans, change: set } = props;
  const states = Array.from(new Set(jobs.map(job => job.state))).sort();
  const kinds = Array.from(
    new Set(jobs.map(job => job.kind ?? 'PyTorchJob'))
  ).sort();
  return (
    <div
      className="jp-PyTorchJobPanel-filter"
      role="search"
      aria-label={trans.__('Filter jobs')}
    >
      <input
        type="search"
        className="jp-mod-styled jp-PyTorchJobPanel-filterText"
        placeholder={trans.__('Filter by name')}
        aria-label={trans.__('Filter by name')}
        value={filter.text}
        onChange={event => set({ text: event.currentTarget.value })}
      />
      <Choice
        label={trans.__('State')}
        value={filter.state}
        choices={['', ...states]}
        labels={{
          '': trans.__('Every state'),
          ...Object.fromEntries(
            states.map(state => [state, stateLabel(state, trans)])
          )
        }}
        onChange={state => set({ state })}
      />
      <Choice
        label={trans.__('Kind')}
        value={filter.kind}
        choices={['', ...kinds]}
        labels={{ '': trans.__('Every kind') }}
        onChange={kind => set({ kind })}
      />
      <Choice
        label={trans.__('Order')}
        value={filter.sort}
        choices={['newest', 'oldest', 'name', 'state']}
        labels={{
          newest: trans.__('Newest first'),
          oldest: trans.__('Oldest first'),
          name: trans.__('By name'),
          state: trans.__('By state')
        }}
        onChange={sort => set({ sort: sort as JobsPanel.IFilter['sort'] })}
      />
    </div>
  );
}

/**
 * One row of the job list.
 */
function JobItem(props: {
  job: IJob;
  now: number;
  trans: TranslationBundle;
  run: (id: string, args?: Record<string, string>) => void;
  selected: boolean;
  select: (selected: boolean) => void;
}): JSX.Element {
  const { job, now, trans, run, selected, select } = props;
  const open = () => run(CommandIDs.openJob, { name: job.name });
  const why = explainJob(job, trans);
  return (
    <li
      className="jp-PyTorchJobPanel-item"
      data-job={job.name}
      data-state={job.state}
    >
      <div className="jp-PyTorchJobPanel-row">
        <input
          type="checkbox"
          className="jp-PyTorchJobPanel-select"
          checked={selected}
          title={trans.__('Select to compare')}
          aria-label={trans.__('Select %1', job.name)}
          onChange={event => select(event.currentTarget.checked)}
        />
        <button
          type="button"
          className="jp-PyTorchJobPanel-name"
          title={trans.__('Open job %1', job.name)}
          onClick={open}
        >
          {job.name}
        </button>
        {job.kind === 'TrainJob' && (
          <span
            className="jp-PyTorchJobPanel-kind"
            title={trans.__('A Kubeflow Trainer v2 TrainJob')}
          >
            {job.kind}
          </span>
        )}
        <span
          className={stateClass(job.state)}
          aria-label={trans.__('State: %1', stateLabel(job.state, trans))}
        >
          {stateLabel(job.state, trans)}
        </span>
      </div>
      <div className="jp-PyTorchJobPanel-details">
        <span title={trans.__('Age')}>
          {formatAge(job.created, now, trans)}
        </span>
        <span title={trans.__('Duration')}>
          {formatDuration(jobDuration(job, now), trans)}
        </span>
        <span title={trans.__('Nodes')}>
          {trans._n('%1 node', '%1 nodes', job.nodes)}
        </span>
        {job.gpus > 0 && (
          <span title={trans.__('GPUs per node')}>
            {trans._n('%1 GPU', '%1 GPUs', job.gpus)}
          </span>
        )}
        <span className="jp-PyTorchJobPanel-rowActions">
          <button
            type="button"
            className="jp-PyTorchJobPanel-link"
            aria-label={trans.__('Logs of %1', job.name)}
            onClick={() => run(CommandIDs.openLogs, { name: job.name })}
          >
            {trans.__('Logs')}
          </button>
          <button
            type="button"
            className="jp-PyTorchJobPanel-iconButton"
            title={trans.__('Delete')}
            aria-label={trans.__('Delete %1', job.name)}
            onClick={() => run(CommandIDs.deleteJob, { name: job.name })}
          >
            <closeIcon.react tag="span" elementSize="normal" />
          </button>
        </span>
      </div>
      <ProgressLine
        name={job.name}
        progress={job.progress}
        running={!isFinished(job.state) && job.state !== 'Suspended'}
        trans={trans}
      />
      {why && (
        <div
          className={`jp-PyTorchJobPanel-reason jp-mod-${why.kind}`}
          title={why.title}
        >
          {why.text}
        </div>
      )}
    </li>
  );
}

/**
 * A namespace for `JobsPanel` statics.
 */
export namespace JobsPanel {
  /**
   * The DOM id of the panel, also its key in the layout restorer.
   */
  export const ID = 'jp-pytorchjob-panel';

  /**
   * Rows rendered at first, and added each time the end of the list comes into
   * view: with 1,000 jobs, styling and laying out every row took seconds
   * (`benchmarks/panel_first_render.py`).
   */
  export const ROWS_PER_PAGE = 50;

  /**
   * What the filter bar keeps: name text, state and kind ('' for any), order.
   */
  export interface IFilter {
    text: string;
    state: string;
    kind: string;
    sort: 'newest' | 'oldest' | 'name' | 'state';
  }

  /**
   * The filter that keeps every job in the server's order.
   */
  export const NO_FILTER: IFilter = {
    text: '',
    state: '',
    kind: '',
    sort: 'newest'
  };

  /**
   * The options of the panel.
   */
  export interface IOptions {
    /**
     * The job list.
     */
    model: JobsModel;

    /**
     * The application's commands (row actions run them).
     */
    commands: CommandRegistry;

    /**
     * The translation bundle of the `jupyter_pytorchjob` domain.
     */
    trans: TranslationBundle;

    /**
     * The running TensorBoards, listed below the jobs when given.
     */
    tensorboards?: TensorBoardsModel;
  }
}
