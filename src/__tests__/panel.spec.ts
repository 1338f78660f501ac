/**
 * Tests of the side panel: rows, badges, actions.
 */

import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { CommandIDs } from '../commandids';
import { JobsModel } from '../model';
import { JobsPanel } from '../panel';
import { IJob } from '../tokens';
import { IFieldInfo } from '../tokens';
import FIELDS_JSON from './fields.json';

// The server's `fields`, as `GET config` types them.
const FIELDS = FIELDS_JSON as Record<string, IFieldInfo>;

const trans = nullTranslator.load('jupyter_pytorchjob');

const jobs: IJob[] = [
  {
    name: 'ddp',
    state: 'Running',
    replicas: [
      { name: 'master-0', phase: 'Running', restarts: 0 },
      {
        name: 'worker-0',
        phase: 'Pending',
        restarts: 0,
        reason: 'Unschedulable',
        message: '0/4 nodes have enough nvidia.com/gpu'
      }
    ],
    nodes: 2,
    gpus: 4,
    created: Date.now() / 1000 - 120,
    started: Date.now() / 1000 - 60
  },
  {
    name: 'done',
    state: 'Succeeded',
    replicas: [{ name: 'master-0', phase: 'Succeeded', restarts: 0 }],
    nodes: 1,
    gpus: 0,
    created: 0,
    started: 10,
    finished: 70
  }
];

async function rendered(panel: JobsPanel): Promise<void> {
  MessageLoop.sendMessage(panel, Widget.Msg.UpdateRequest);
  await panel.renderPromise;
  await new Promise(resolve => setTimeout(resolve, 0));
}

describe('JobsPanel', () => {
  let model: JobsModel;
  let commands: CommandRegistry;
  let executed: Array<[string, unknown]>;
  let panel: JobsPanel;

  beforeEach(async () => {
    model = new JobsModel({
      fetchJobs: () => Promise.resolve(jobs),
      refreshInterval: 3600
    });
    commands = new CommandRegistry();
    executed = [];
    for (const id of [
      CommandIDs.newJob,
      CommandIDs.openJob,
      CommandIDs.openLogs,
      CommandIDs.deleteJob
    ]) {
      commands.addCommand(id, {
        execute: args => {
          executed.push([id, args]);
        }
      });
    }
    panel = new JobsPanel({ model, commands, trans });
    Widget.attach(panel, document.body);
    await model.refresh();
    await rendered(panel);
  });

  afterEach(() => {
    panel.dispose();
    model.dispose();
  });

  it('is a labelled region with the panel id', () => {
    expect(panel.id).toBe('jp-pytorchjob-panel');
    expect(panel.node.getAttribute('role')).toBe('region');
    expect(panel.node.getAttribute('aria-label')).toBe('PyTorch Jobs');
  });

  it('lists the jobs with state badges, nodes and GPUs', () => {
    const rows = panel.node.querySelectorAll('.jp-PyTorchJobPanel-item');
    expect(rows).toHaveLength(2);
    const first = rows[0] as HTMLElement;
    expect(first.dataset.state).toBe('Running');
    expect(first.querySelector('.jp-PyTorchJob-badge')!.className).toContain(
      'jp-mod-running'
    );
    expect(first.textContent).toContain('2 nodes');
    expect(first.textContent).toContain('4 GPUs');
    expect(first.textContent).toContain('2m ago');
    expect(first.textContent).toContain('worker-0: Unschedulable');
    const second = rows[1] as HTMLElement;
    expect(second.textContent).toContain('1m 0s');
    expect(second.textContent).not.toContain('GPU');
    expect(panel.node.querySelector('.jp-PyTorchJobPanel-kind')).toBeNull();
  });

  it('marks TrainJobs among PyTorchJobs', async () => {
    const mixed = new JobsModel({
      fetchJobs: () =>
        Promise.resolve([
          { ...jobs[1], name: 'tj', kind: 'TrainJob' },
          jobs[0]
        ]),
      refreshInterval: 3600
    });
    panel.dispose();
    panel = new JobsPanel({ model: mixed, commands, trans });
    Widget.attach(panel, document.body);
    await mixed.refresh();
    await rendered(panel);
    const rows = panel.node.querySelectorAll('.jp-PyTorchJobPanel-item');
    expect(rows[0].querySelector('.jp-PyTorchJobPanel-kind')!.textContent).toBe(
      'TrainJob'
    );
    expect(rows[1].querySelector('.jp-PyTorchJobPanel-kind')).toBeNull();
    mixed.dispose();
  });

  it('runs the row actions as commands', () => {
    const row = panel.node.querySelector('[data-job="ddp"]')!;
    (row.querySelector('.jp-PyTorchJobPanel-name') as HTMLElement).click();
    (row.querySelector('[aria-label="Logs of ddp"]') as HTMLElement).click();
    (row.querySelector('[aria-label="Delete ddp"]') as HTMLElement).click();
    (
      panel.node.querySelector('.jp-PyTorchJobPanel-new') as HTMLElement
    ).click();
    expect(executed).toEqual([
      [CommandIDs.openJob, { name: 'ddp' }],
      [CommandIDs.openLogs, { name: 'ddp' }],
      [CommandIDs.deleteJob, { name: 'ddp' }],
      [CommandIDs.newJob, {}]
    ]);
  });

  it('has a compact toolbar of JupyterLab toolbar buttons with tooltips', async () => {
    const toolbar = panel.node.querySelector('[role="toolbar"]')!;
    expect(toolbar.classList).toContain('jp-Toolbar');
    // JupyterLab's ToolbarButtonComponent (a <jp-button> element).
    const buttons = Array.from(
      toolbar.querySelectorAll('.jp-ToolbarButtonComponent')
    ) as HTMLElement[];
    expect(buttons.map(b => b.title)).toEqual([
      'Create a new PyTorch job',
      'Filter and sort the jobs',
      'Refresh'
    ]);
    for (const button of buttons) {
      expect(button.querySelector('svg')).not.toBeNull();
    }
    const fetched = jest.spyOn(model, 'refresh');
    buttons[2].click();
    expect(fetched).toHaveBeenCalledTimes(1);
    // The title is a heading of its own, above the toolbar.
    expect(panel.node.querySelector('h2')!.textContent).toBe('PyTorch Jobs');
  });

  it('filters by name, state and kind, and sorts', async () => {
    const names = () =>
      Array.from(panel.node.querySelectorAll('.jp-PyTorchJobPanel-item')).map(
        row => (row as HTMLElement).dataset.job
      );
    expect(panel.node.querySelector('[role="search"]')).toBeNull();
    (
      panel.node.querySelector(
        '.jp-PyTorchJobPanel-filterToggle'
      ) as HTMLElement
    ).click();
    await rendered(panel);
    const bar = panel.node.querySelector('[role="search"]')!;
    const change = (label: string, value: string) => {
      const field = bar.querySelector(`[aria-label="${label}"]`) as
        HTMLInputElement | HTMLSelectElement;
      // React tracks the value it set: go through the prototype's setter.
      const setter = Object.getOwnPropertyDescriptor(
        Object.getPrototypeOf(field),
        'value'
      )!.set!;
      setter.call(field, value);
      field.dispatchEvent(
        new Event(field.tagName === 'INPUT' ? 'input' : 'change', {
          bubbles: true
        })
      );
    };
    expect(names()).toEqual(['ddp', 'done']);
    change('Order', 'oldest');
    await rendered(panel);
    expect(names()).toEqual(['done', 'ddp']);
    change('State', 'Running');
    await rendered(panel);
    expect(names()).toEqual(['ddp']);
    change('State', '');
    change('Filter by name', 'DON');
    await rendered(panel);
    expect(names()).toEqual(['done']);
    change('Filter by name', 'nothing');
    await rendered(panel);
    expect(panel.node.textContent).toContain('No job matches the filter.');
    change('Filter by name', '');
    // The kinds offered are those listed.
    const kinds = bar.querySelector('[aria-label="Kind"]')!;
    expect(
      Array.from(kinds.querySelectorAll('option')).map(o => o.value)
    ).toEqual(['', 'PyTorchJob']);
    change('Kind', 'PyTorchJob');
    await rendered(panel);
    expect(names()).toEqual(['done', 'ddp']);
    // Closing the bar shows every job again.
    (
      panel.node.querySelector(
        '.jp-PyTorchJobPanel-filterToggle'
      ) as HTMLElement
    ).click();
    await rendered(panel);
    expect(names()).toEqual(['ddp', 'done']);
  });

  it('shows the backend once the configuration is known', async () => {
    panel.config = {
      version: '0.1.0',
      backend: 'local',
      defaults: { image: 'i', gpuResource: 'nvidia.com/gpu', shm: '2Gi' },
      fields: FIELDS,
      kinds: []
    };
    await rendered(panel);
    expect(
      panel.node.querySelector('.jp-PyTorchJobPanel-footer')!.textContent
    ).toBe('Backend: local');
  });

  it('tells the model when it is shown or hidden', () => {
    panel.hide();
    expect(model.visible).toBe(false);
    panel.show();
    expect(model.visible).toBe(true);
  });

  it('renders a page of rows at first, and more on demand', async () => {
    const many: IJob[] = Array.from(
      { length: JobsPanel.ROWS_PER_PAGE * 2 + 5 },
      (_, i) => ({ ...jobs[1], name: `job-${i}` })
    );
    const big = new JobsModel({
      fetchJobs: () => Promise.resolve(many),
      refreshInterval: 3600
    });
    const paged = new JobsPanel({ model: big, commands, trans });
    Widget.attach(paged, document.body);
    await big.refresh();
    await rendered(paged);
    const rows = () =>
      paged.node.querySelectorAll('.jp-PyTorchJobPanel-item').length;
    const more = () =>
      paged.node.querySelector(
        '.jp-PyTorchJobPanel-more button'
      ) as HTMLElement | null;
    expect(rows()).toBe(JobsPanel.ROWS_PER_PAGE);
    expect(more()!.textContent).toBe(
      `Show more (${JobsPanel.ROWS_PER_PAGE} of ${many.length} shown)`
    );
    more()!.click();
    await rendered(paged);
    expect(rows()).toBe(JobsPanel.ROWS_PER_PAGE * 2);
    more()!.click();
    await rendered(paged);
    expect(rows()).toBe(many.length);
    expect(more()).toBeNull();
    paged.dispose();
    big.dispose();
  });
});
