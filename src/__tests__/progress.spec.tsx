/**
 * Tests of progress and metrics in the UI: formatting, the panel's bar and
 * key metric, the job view's section (live), the finished-job notice, the
 * comparison tab and the panel's selection.
 */

import { nullTranslator } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import { PyTorchJobClient } from '../api';
import { CommandIDs } from '../commandids';
import { ComparisonView, formatParameter } from '../compare';
import { JobView } from '../jobview';
import { JobsModel } from '../model';
import { JobsPanel } from '../panel';
import {
  describeKeyMetric,
  finishedNotice,
  formatMetric,
  keyMetric,
  latestRun,
  MetricChart,
  ProgressSection
} from '../progress';
import { IComparison, IJob, IJobProgress, IMetricPoint } from '../tokens';

const trans = nullTranslator.load('jupyter_pytorchjob');

function progress(extra: Partial<IJobProgress> = {}): IJobProgress {
  return {
    percent: 45,
    etaSeconds: 102,
    step: 450,
    totalSteps: 1000,
    epoch: 1.5,
    totalEpochs: 3,
    metrics: { loss: 0.2314, learning_rate: 2e-5 },
    keyMetric: 'loss',
    source: 'logs',
    updated: Date.now() / 1000 - 3,
    ...extra
  };
}

const RUNNING: IJob = {
  name: 'ddp-3',
  state: 'Running',
  replicas: [{ name: 'master-0', phase: 'Running', restarts: 0 }],
  nodes: 1,
  gpus: 0,
  created: Date.now() / 1000 - 100,
  started: Date.now() / 1000 - 90,
  progress: progress()
};

const FINISHED: IJob = {
  name: 'done',
  state: 'Succeeded',
  replicas: [{ name: 'master-0', phase: 'Succeeded', restarts: 0 }],
  nodes: 1,
  gpus: 0,
  created: 0,
  started: 100,
  finished: 820,
  progress: progress({ percent: 100, etaSeconds: 0, metrics: { loss: 0.2 } })
};

async function rendered(widget: Widget & { renderPromise?: Promise<any> }) {
  MessageLoop.sendMessage(widget, Widget.Msg.UpdateRequest);
  await widget.renderPromise;
  await new Promise(resolve => setTimeout(resolve, 0));
}

describe('formatMetric', () => {
  it('keeps three significant digits, exponents for tiny or huge values', () => {
    expect(formatMetric(0.23141)).toBe('0.231');
    expect(formatMetric(12.345)).toBe('12.3');
    expect(formatMetric(4150.6)).toBe('4151');
    expect(formatMetric(2e-5)).toBe('2.00e-5');
    expect(formatMetric(3e9)).toBe('3.00e+9');
    expect(formatMetric(0)).toBe('0');
    expect(formatMetric(null)).toBe('—');
    expect(formatMetric(NaN)).toBe('—');
  });

  it('formats parameters: command lines joined, none as a dash', () => {
    expect(formatParameter(['--lr', '0.1'])).toBe('--lr 0.1');
    expect(formatParameter(null)).toBe('—');
    expect(formatParameter(4)).toBe('4');
    // Objects as the flags write them, never raw JSON (issue 32).
    expect(formatParameter([{ claim: 'a' }])).toBe('claim=a');
  });
});

describe('keyMetric', () => {
  it('is the server’s key metric, else the first one', () => {
    expect(keyMetric(progress())).toEqual(['loss', 0.2314]);
    expect(
      keyMetric(progress({ keyMetric: null, metrics: { acc: 0.9, f1: 1 } }))
    ).toEqual(['acc', 0.9]);
    expect(keyMetric(progress({ keyMetric: 'loss', metrics: {} }))).toBeNull();
    expect(keyMetric(null)).toBeNull();
    expect(describeKeyMetric(progress())).toBe('loss 0.231');
  });
});

describe('finishedNotice', () => {
  it('names the final key metric and how long the job ran', () => {
    expect(finishedNotice(FINISHED, trans)).toBe(
      'PyTorch job done succeeded — loss 0.2 after 12m 0s'
    );
    expect(
      finishedNotice({ ...FINISHED, state: 'Failed', progress: null }, trans)
    ).toBe('PyTorch job done failed after 12m 0s');
    expect(
      finishedNotice(
        { ...FINISHED, started: null, finished: null, progress: null },
        trans
      )
    ).toBe('PyTorch job done succeeded');
  });
});

describe('MetricChart', () => {
  const series = (values: number[]): IMetricPoint[] =>
    values.map((value, i) => ({ time: i, step: i * 10, value }));

  async function chart(
    points: IMetricPoint[],
    openInTensorBoard?: (tag: string) => void
  ): Promise<Widget> {
    const widget = ReactWidget.create(
      <MetricChart
        name="loss"
        points={points}
        trans={trans}
        openInTensorBoard={openInTensorBoard}
      />
    );
    Widget.attach(widget, document.body);
    await rendered(widget);
    return widget;
  }

  const coordinates = (widget: Widget) =>
    widget.node
      .querySelector('polyline')!
      .getAttribute('points')!
      .split(' ')
      .map(pair => pair.split(',').map(Number));

  it('draws one point per value inside labelled axes', async () => {
    const widget = await chart(series([3, 2, 1.5, 1]));
    const points = coordinates(widget);
    expect(points).toHaveLength(4);
    // The highest value at the top, the lowest at the bottom, left to right,
    // inside the axis labels.
    expect(points[0]).toEqual([48, 8]);
    expect(points[3]).toEqual([272, 92]);
    const labels = Array.from(widget.node.querySelectorAll('text')).map(
      text => text.textContent
    );
    expect(labels).toEqual(['3', '1', 'step 0', 'step 30']);
    expect(widget.node.textContent).not.toContain('log scale');
    expect(widget.node.querySelector('svg')!.getAttribute('aria-label')).toBe(
      'loss: 4 values, last 1'
    );
    widget.dispose();
  });

  it('draws a loss spanning decades on a log scale, not flat at zero', async () => {
    const widget = await chart(series([10.9, 1e-3, 1e-8, 1e-13]));
    const [, second, third, last] = coordinates(widget);
    // Linear, every point after the first lies on the bottom (y = 92).
    expect(second[1]).toBeLessThan(60);
    expect(third[1]).toBeLessThan(70);
    expect(last[1]).toBe(92);
    expect(widget.node.textContent).toContain('log scale');
    widget.dispose();
  });

  it('draws a constant metric across the middle', async () => {
    const widget = await chart(series([0.05, 0.05, 0.05]));
    expect(coordinates(widget).map(([, y]) => y)).toEqual([50, 50, 50]);
    widget.dispose();
  });

  it('reads out the value under the pointer, and with the arrow keys', async () => {
    const widget = await chart(series([3, 2, 1.5, 1]));
    const svg = widget.node.querySelector('svg')!;
    svg.getBoundingClientRect = () =>
      ({ left: 0, top: 0, width: 280, height: 110 }) as DOMRect;
    const readout = () =>
      widget.node.querySelector('.jp-PyTorchJob-sparklineValue')!.textContent;
    expect(readout()).toBe('1');
    svg.dispatchEvent(
      new MouseEvent('mousemove', { bubbles: true, clientX: 125 })
    );
    await rendered(widget);
    expect(readout()).toBe('step 10: 2');
    expect(widget.node.querySelector('circle')).not.toBeNull();
    svg.dispatchEvent(
      new KeyboardEvent('keydown', { bubbles: true, key: 'Home' })
    );
    await rendered(widget);
    expect(readout()).toBe('step 0: 3');
    svg.dispatchEvent(
      new KeyboardEvent('keydown', { bubbles: true, key: 'ArrowRight' })
    );
    await rendered(widget);
    expect(readout()).toBe('step 10: 2');
    widget.dispose();
  });

  it('links to the scalar in TensorBoard when given a way to open it', async () => {
    const opened: string[] = [];
    const widget = await chart(series([3, 2]), tag => opened.push(tag));
    (
      widget.node.querySelector('.jp-PyTorchJob-chartLink') as HTMLElement
    ).click();
    expect(opened).toEqual(['loss']);
    widget.dispose();
    const without = await chart(series([3, 2]));
    expect(without.node.querySelector('.jp-PyTorchJob-chartLink')).toBeNull();
    without.dispose();
  });
});

describe('the panel’s progress', () => {
  let model: JobsModel;
  let panel: JobsPanel;
  let commands: CommandRegistry;
  let executed: Array<[string, unknown]>;

  beforeEach(async () => {
    model = new JobsModel({
      fetchJobs: () => Promise.resolve([RUNNING, FINISHED]),
      refreshInterval: 3600
    });
    commands = new CommandRegistry();
    executed = [];
    commands.addCommand(CommandIDs.compareJobs, {
      execute: args => {
        executed.push([CommandIDs.compareJobs, args]);
      }
    });
    panel = new JobsPanel({ model, commands, trans });
    Widget.attach(panel, document.body);
    await model.refresh();
    await rendered(panel);
  });

  afterEach(() => {
    panel.dispose();
    model.dispose();
  });

  /**
   * The panel again, listing `jobs` only.
   */
  async function showOnly(jobs: IJob[]): Promise<void> {
    model.dispose();
    panel.dispose();
    model = new JobsModel({
      fetchJobs: () => Promise.resolve(jobs),
      refreshInterval: 3600
    });
    panel = new JobsPanel({ model, commands, trans });
    Widget.attach(panel, document.body);
    await model.refresh();
    await rendered(panel);
  }

  it('shows a bar, the ETA and the key metric on a running job', () => {
    const row = panel.node.querySelector('[data-job="ddp-3"]')!;
    const bar = row.querySelector('[role="progressbar"]')!;
    expect(bar.getAttribute('aria-valuenow')).toBe('45');
    expect(bar.getAttribute('aria-label')).toBe('Progress of ddp-3');
    expect(
      (row.querySelector('.jp-PyTorchJob-progressFill') as HTMLElement).style
        .width
    ).toBe('45%');
    expect(row.querySelector('.jp-PyTorchJobPanel-eta')!.textContent).toBe(
      '1m 42s left'
    );
    expect(row.querySelector('.jp-PyTorchJobPanel-metric')!.textContent).toBe(
      'loss 0.231'
    );
  });

  it('shows the key metric as the script printed it', async () => {
    await showOnly([
      {
        ...RUNNING,
        progress: progress({
          metrics: { loss: 0 },
          metricTexts: { loss: '0.0000' }
        })
      }
    ]);
    expect(
      panel.node.querySelector('.jp-PyTorchJobPanel-metric')!.textContent
    ).toBe('loss 0.0000');
  });

  it('keeps a finished job’s final metric, without a bar', () => {
    const row = panel.node.querySelector('[data-job="done"]')!;
    expect(row.querySelector('[role="progressbar"]')).toBeNull();
    expect(row.querySelector('.jp-PyTorchJobPanel-metric')!.textContent).toBe(
      'loss 0.2'
    );
  });

  it('shows an indeterminate bar when the percent is unknown', async () => {
    await showOnly([
      {
        ...RUNNING,
        progress: progress({ percent: null, etaSeconds: null })
      }
    ]);
    const bar = panel.node.querySelector('[role="progressbar"]')!;
    expect(bar.className).toContain('jp-mod-indeterminate');
    expect(bar.hasAttribute('aria-valuenow')).toBe(false);
    expect(panel.node.querySelector('.jp-PyTorchJobPanel-eta')).toBeNull();
  });

  it('compares the jobs selected with the check boxes', async () => {
    const compareButton = () =>
      panel.node.querySelector(
        '.jp-PyTorchJobPanel-compare'
      ) as HTMLButtonElement | null;
    expect(compareButton()).toBeNull();
    for (const name of ['ddp-3', 'done']) {
      (
        panel.node.querySelector(`[aria-label="Select ${name}"]`) as HTMLElement
      ).click();
      await rendered(panel);
    }
    expect(model.selected).toEqual(['ddp-3', 'done']);
    expect(compareButton()!.textContent).toBe('Compare (2)');
    compareButton()!.click();
    expect(executed).toEqual([
      [CommandIDs.compareJobs, { names: ['ddp-3', 'done'] }]
    ]);
  });

  it('forgets a selected job once it is deleted', async () => {
    model.setSelected('done', true);
    model.setSelected('ddp-3', true);
    const fewer = new JobsModel({
      fetchJobs: () => Promise.resolve([RUNNING]),
      refreshInterval: 3600
    });
    fewer.setSelected('ddp-3', true);
    fewer.setSelected('gone', true);
    await fewer.refresh();
    expect(fewer.selected).toEqual(['ddp-3']);
    expect(fewer.isSelected('gone')).toBe(false);
    fewer.dispose();
  });
});

/**
 * A job view of `ddp-3` on `client`, attached and rendered.
 */
async function openView(client: object): Promise<JobView> {
  const view = new JobView({
    name: 'ddp-3',
    client: client as unknown as PyTorchJobClient,
    commands: new CommandRegistry(),
    trans,
    refreshInterval: 3600
  });
  Widget.attach(view, document.body);
  await view.refresh();
  await rendered(view);
  return view;
}

describe('the job view’s progress section', () => {
  it('shows percent, ETA, steps, source and a chart per scalar, live', async () => {
    let current: IJob = RUNNING;
    const history: Record<string, IMetricPoint[]> = {
      loss: [
        { time: 1, step: 10, value: 1.2 },
        { time: 2, step: 20, value: 0.6 },
        { time: 3, step: 30, value: 0.23 }
      ],
      learning_rate: [{ time: 1, step: 10, value: 2e-5 }]
    };
    const client = {
      getJob: jest.fn(() => Promise.resolve(current)),
      events: jest.fn().mockResolvedValue([]),
      progress: jest.fn(() =>
        Promise.resolve({ progress: current.progress, history })
      )
    };
    const view = await openView(client);
    const section = () =>
      view.node.querySelector('.jp-PyTorchJobView-progress') as HTMLElement;
    expect(client.progress).toHaveBeenCalledWith('ddp-3');
    expect(section().querySelector('h3')!.textContent).toBe(
      'Progress & metrics'
    );
    expect(
      section().querySelector('.jp-PyTorchJobView-percent')!.textContent
    ).toBe('45%');
    expect(section().querySelector('.jp-PyTorchJobView-eta')!.textContent).toBe(
      '1m 42s'
    );
    expect(section().textContent).toContain('step 450 / 1000 · epoch 1.5 / 3');
    // Not "Step: step 450 / 1000".
    const terms = Array.from(section().querySelectorAll('dt')).map(
      dt => dt.textContent
    );
    expect(terms).toContain('Training');
    expect(terms).not.toContain('Step');
    expect(section().textContent).toContain('the job’s log');
    expect(section().textContent).toContain('just now');
    // A line for the metric with a history, the value alone for the other.
    expect(
      section().querySelectorAll('[data-metric="loss"] polyline')
    ).toHaveLength(1);
    expect(
      section().querySelector('[data-metric="learning_rate"]')!.textContent
    ).toContain('2.00e-5');

    // The next poll brings new progress: the section follows.
    current = {
      ...RUNNING,
      progress: progress({ percent: 80, etaSeconds: 20, source: 'report' })
    };
    history.loss = [...history.loss, { time: 4, step: 40, value: 0.1 }];
    await view.refresh();
    await rendered(view);
    expect(
      section().querySelector('.jp-PyTorchJobView-percent')!.textContent
    ).toBe('80%');
    expect(section().textContent).toContain('reported by the job');
    expect(
      section()
        .querySelector('[data-metric="loss"] polyline')!
        .getAttribute('points')!
        .split(' ')
    ).toHaveLength(4);
    view.dispose();
  });

  it('shows a metric as the script printed it, not as its number', async () => {
    // `loss=0.0000` in the log: "loss 0.0000", never "loss 0" (issue 32).
    const printed = {
      ...RUNNING,
      progress: progress({
        metrics: { loss: 0, learning_rate: 2e-5 },
        metricTexts: { loss: '0.0000', learning_rate: '2e-05' }
      })
    };
    const history: Record<string, IMetricPoint[]> = {
      loss: [
        { time: 1, step: 10, value: 0.5 },
        { time: 2, step: 20, value: 0 }
      ],
      learning_rate: [{ time: 1, step: 10, value: 2e-5 }]
    };
    const client = {
      getJob: jest.fn().mockResolvedValue(printed),
      events: jest.fn().mockResolvedValue([]),
      progress: jest.fn(() =>
        Promise.resolve({ progress: printed.progress, history })
      )
    };
    const view = await openView(client);
    const value = (name: string) =>
      view.node.querySelector(
        `[data-metric="${name}"] .jp-PyTorchJob-sparklineValue`
      )!.textContent;
    expect(value('loss')).toBe('0.0000');
    expect(value('learning_rate')).toBe('2e-05');
    expect(describeKeyMetric(printed.progress)).toBe('loss 0.0000');
    view.dispose();
  });

  it('says so when nothing was reported yet', async () => {
    const client = {
      getJob: jest.fn().mockResolvedValue({ ...RUNNING, progress: null }),
      events: jest.fn().mockResolvedValue([]),
      progress: jest.fn().mockRejectedValue(new Error('404'))
    };
    const view = await openView(client);
    expect(
      view.node.querySelector('.jp-PyTorchJobView-progress')!.textContent
    ).toContain('Nothing reported yet');
    expect(view.node.querySelector('.jp-PyTorchJobView-error')).toBeNull();
    view.dispose();
  });
});

describe('a suspended job’s progress', () => {
  const history: Record<string, IMetricPoint[]> = {
    // Steps 10-30 before the suspension, then the resumed run from step 10.
    loss: [
      { time: 1, step: 10, value: 1.2 },
      { time: 2, step: 20, value: 0.6 },
      { time: 3, step: 30, value: 0.23 },
      { time: 9, step: 10, value: 1.1 },
      { time: 10, step: 20, value: 0.7 }
    ]
  };

  async function section(suspended: boolean): Promise<Widget> {
    const widget = ReactWidget.create(
      <ProgressSection
        progress={progress({ updated: Date.now() / 1000 })}
        history={history}
        running={true}
        suspended={suspended}
        now={Date.now()}
        trans={trans}
      />
    );
    Widget.attach(widget, document.body);
    await rendered(widget);
    return widget;
  }

  it('drops its ETA, bar and last update, and says resuming restarts', async () => {
    const widget = await section(true);
    expect(widget.node.querySelector('.jp-PyTorchJobView-eta')).toBeNull();
    expect(widget.node.querySelector('[role="progressbar"]')).toBeNull();
    expect(widget.node.textContent).not.toContain('just now');
    expect(widget.node.textContent).toContain(
      'resuming starts the job again from scratch'
    );
    widget.dispose();
    const running = await section(false);
    expect(running.node.querySelector('.jp-PyTorchJobView-eta')).not.toBeNull();
    expect(running.node.textContent).toContain('just now');
    running.dispose();
  });

  it('charts the latest run only, once resumed', async () => {
    expect(latestRun(history.loss).map(p => p.time)).toEqual([9, 10]);
    expect(latestRun(history.loss.slice(0, 3))).toHaveLength(3);
    const widget = await section(false);
    const points = widget.node
      .querySelector('[data-metric="loss"] polyline')!
      .getAttribute('points')!
      .split(' ');
    expect(points).toHaveLength(2);
    widget.dispose();
  });
});

describe('ComparisonView', () => {
  const COMPARISON: IComparison = {
    jobs: [
      { name: 'a', state: 'Succeeded', duration: 60, logdir: '/runs/a' },
      { name: 'b', state: 'Succeeded', duration: 120, logdir: null },
      { name: 'c', state: 'Failed', duration: 30, logdir: '/runs/c' }
    ],
    hparams: [],
    parameters: [
      { field: 'args', values: [['--lr', '0.1'], ['--lr', '0.01'], null] },
      { field: 'env.SEED', values: ['1', '2', '3'] }
    ],
    metrics: [
      {
        name: 'loss',
        values: [0.5, 0.2, null],
        lowerIsBetter: true,
        scored: true,
        best: 1
      },
      {
        name: 'accuracy',
        values: [0.9, 0.8, 0.95],
        lowerIsBetter: false,
        scored: true,
        best: 2
      }
    ]
  };

  it('shows a column per job, the differing parameters, the best metric marked', async () => {
    const opened: string[][] = [];
    const load = jest.fn().mockResolvedValue(COMPARISON);
    const view = new ComparisonView({
      names: ['a', 'b', 'c'],
      load,
      trans,
      openTensorBoard: names => opened.push(names)
    });
    Widget.attach(view, document.body);
    await view.refresh();
    await rendered(view);
    expect(load).toHaveBeenCalledWith(['a', 'b', 'c']);
    const headers = Array.from(view.node.querySelectorAll('thead th')).map(th =>
      th.getAttribute('data-job')
    );
    expect(headers).toEqual([null, 'a', 'b', 'c']);
    const cells = (selector: string) =>
      Array.from(view.node.querySelectorAll(`${selector} td`));
    // Only the tokens that differ (issue 32): the shared `--lr` is `…`.
    expect(cells('[data-parameter="args"]').map(td => td.textContent)).toEqual([
      '… 0.1',
      '… 0.01',
      '—'
    ]);
    const loss = cells('[data-metric="loss"]');
    expect(loss.map(td => td.className)).toEqual(['', 'jp-mod-best', '']);
    expect(loss[1].getAttribute('aria-label')).toBe('0.2 (best)');
    expect(cells('[data-metric="accuracy"]').map(td => td.className)).toEqual([
      '',
      '',
      'jp-mod-best'
    ]);
    (
      view.node.querySelector(
        '.jp-PyTorchJobCompare-tensorboard'
      ) as HTMLButtonElement
    ).click();
    // Only the jobs with a log directory become runs.
    expect(opened).toEqual([['a', 'c']]);
    view.dispose();
  });

  it('shows why a comparison cannot be loaded', async () => {
    const view = new ComparisonView({
      names: ['a', 'gone'],
      load: () => Promise.reject(new Error('no job gone')),
      trans,
      openTensorBoard: () => undefined
    });
    Widget.attach(view, document.body);
    await view.refresh();
    await rendered(view);
    expect(view.node.querySelector('[role="alert"]')!.textContent).toBe(
      'no job gone'
    );
    view.dispose();
  });
});
