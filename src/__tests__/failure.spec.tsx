/**
 * Tests of why a job failed or waits, in the UI: the one-line summary, the
 * panel row, the job view's Failure section and Waiting line, the replica
 * row, where the log viewer starts, the finished-job notice.
 */

import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { PyTorchJobClient } from '../api';
import { CommandIDs } from '../commandids';
import { explainJob, failureSummary, logStart } from '../failure';
import { JobView, withFailure } from '../jobview';
import { JobsModel } from '../model';
import { JobsPanel } from '../panel';
import { finishedNotice } from '../progress';
import { IJob, IJobFailure } from '../tokens';

const trans = nullTranslator.load('jupyter_pytorchjob');

const TRACEBACK = [
  'Traceback (most recent call last):',
  '  File "/work/train.py", line 12, in <module>',
  '    print(1 / 0)',
  'ZeroDivisionError: division by zero'
];

const FAILURE: IJobFailure = {
  replica: 'master-0',
  exitCode: 1,
  signal: null,
  reason: 'Error',
  message: 'ZeroDivisionError: division by zero',
  tail: TRACEBACK,
  logSource: 'previous',
  hint: null
};

/**
 * A failed job as the local backend reports it with `cleanPodPolicy:
 * Running`: the failed replica's pod deleted at the end.
 */
const FAILED: IJob = {
  name: 'broken',
  state: 'Failed',
  replicas: [
    {
      name: 'master-0',
      phase: 'Deleted',
      restarts: 3,
      reason: 'CleanPodPolicy',
      message: 'deleted when the job ended'
    },
    {
      name: 'worker-0',
      phase: 'Deleted',
      restarts: 0,
      reason: 'CleanPodPolicy'
    }
  ],
  nodes: 2,
  gpus: 0,
  created: 0,
  started: 10,
  finished: 40,
  failure: FAILURE
};

const PENDING: IJob = {
  name: 'big',
  state: 'Created',
  replicas: [
    {
      name: 'master-0',
      phase: 'Pending',
      restarts: 0,
      reason: 'Unschedulable',
      message: '0/8 nodes are available: 8 Insufficient nvidia.com/gpu.'
    }
  ],
  nodes: 1,
  gpus: 8,
  created: 0,
  waiting: {
    reason: 'Unschedulable',
    message: '0/8 nodes are available: 8 Insufficient nvidia.com/gpu.',
    hint: 'Ask for fewer GPUs (--gpus).'
  }
};

/**
 * The text of each element `selector` finds below `root`.
 */
function texts(root: Element, selector: string): Array<string | null> {
  return Array.from(root.querySelectorAll(selector)).map(e => e.textContent);
}

async function rendered(widget: Widget & { renderPromise?: Promise<any> }) {
  MessageLoop.sendMessage(widget, Widget.Msg.UpdateRequest);
  await widget.renderPromise;
  await new Promise(resolve => setTimeout(resolve, 0));
}

describe('failureSummary', () => {
  it('says which replica ended how, then the exception', () => {
    expect(failureSummary(FAILURE, trans)).toBe(
      'master-0 exited 1: ZeroDivisionError: division by zero'
    );
  });

  it('names the signal rather than the exit code it implies', () => {
    expect(
      failureSummary(
        {
          ...FAILURE,
          exitCode: 137,
          signal: 'SIGKILL',
          reason: 'OOMKilled',
          message: ''
        },
        trans
      )
    ).toBe('master-0 killed by SIGKILL: OOMKilled');
  });

  it('falls back to the reason, and to the replica alone', () => {
    expect(failureSummary({ ...FAILURE, message: '' }, trans)).toBe(
      'master-0 exited 1: Error'
    );
    expect(
      failureSummary(
        { ...FAILURE, exitCode: null, message: '', reason: 'Evicted' },
        trans
      )
    ).toBe('master-0 failed: Evicted');
    expect(failureSummary({ ...FAILURE, message: '', reason: '' }, trans)).toBe(
      'master-0 exited 1'
    );
  });

  it('is the reason alone when no replica failed (a deadline)', () => {
    expect(
      failureSummary(
        {
          ...FAILURE,
          replica: '',
          exitCode: null,
          reason: 'DeadlineExceeded',
          message: 'Job was active longer than specified deadline',
          tail: [],
          logSource: null
        },
        trans
      )
    ).toBe('Job was active longer than specified deadline');
  });
});

describe('explainJob', () => {
  it('gives a failed job’s failure, never the clean-up of its pods', () => {
    expect(explainJob(FAILED, trans)).toEqual({
      text: 'master-0 exited 1: ZeroDivisionError: division by zero',
      title: '',
      kind: 'failure'
    });
    // A server that sends no failure: the clean-up is still no cause.
    expect(explainJob({ ...FAILED, failure: null }, trans)).toBeNull();
  });

  it('gives a waiting job what it waits for, with the hint as title', () => {
    expect(explainJob(PENDING, trans)).toEqual({
      text: '0/8 nodes are available: 8 Insufficient nvidia.com/gpu.',
      title: 'Ask for fewer GPUs (--gpus).',
      kind: 'waiting'
    });
    // Else why a replica is not running.
    expect(explainJob({ ...PENDING, waiting: null }, trans)).toEqual({
      text: 'master-0: Unschedulable',
      title: '0/8 nodes are available: 8 Insufficient nvidia.com/gpu.',
      kind: 'waiting'
    });
  });

  it('says nothing of a job that succeeded', () => {
    expect(
      explainJob({ ...FAILED, state: 'Succeeded', failure: null }, trans)
    ).toBeNull();
  });
});

describe('logStart', () => {
  it('opens a failed job on the previous containers when its failing run is one, saying so', () => {
    expect(logStart(FAILED, undefined, trans)).toEqual({
      previous: true,
      why: 'Showing the run that failed: the previous container of master-0.'
    });
  });

  it('keeps what the user asked for', () => {
    expect(logStart(FAILED, false, trans)).toEqual({
      previous: false,
      why: ''
    });
    expect(logStart(PENDING, true, trans)).toEqual({
      previous: true,
      why: ''
    });
  });

  it('opens on the current run otherwise (the archive is read for gone pods)', () => {
    for (const logSource of ['current', 'archive', null] as const) {
      expect(
        logStart(
          { ...FAILED, failure: { ...FAILURE, logSource } },
          undefined,
          trans
        )
      ).toEqual({ previous: false, why: '' });
    }
    expect(logStart(null, undefined, trans).previous).toBe(false);
  });
});

describe('withFailure', () => {
  it('shows the failed replica’s end in its row, not its clean-up', () => {
    expect(withFailure(FAILED.replicas[0], FAILURE)).toMatchObject({
      name: 'master-0',
      phase: 'Deleted',
      exitCode: 1,
      reason: 'Error',
      message: 'ZeroDivisionError: division by zero'
    });
    expect(withFailure(FAILED.replicas[1], FAILURE)).toBe(FAILED.replicas[1]);
  });
});

describe('finishedNotice of a failed job', () => {
  it('carries the failure', () => {
    expect(finishedNotice(FAILED, trans)).toBe(
      'PyTorch job broken failed: master-0 exited 1: ZeroDivisionError: division by zero'
    );
  });
});

describe('the panel row', () => {
  it('shows a failed job’s failure and a waiting job’s message', async () => {
    const model = new JobsModel({
      fetchJobs: () => Promise.resolve([FAILED, PENDING]),
      refreshInterval: 3600
    });
    const panel = new JobsPanel({
      model,
      commands: new CommandRegistry(),
      trans
    });
    Widget.attach(panel, document.body);
    try {
      await model.refresh();
      await rendered(panel);
      const line = (name: string) =>
        panel.node.querySelector(
          `[data-job="${name}"] .jp-PyTorchJobPanel-reason`
        ) as HTMLElement;
      expect(line('broken').textContent).toBe(
        'master-0 exited 1: ZeroDivisionError: division by zero'
      );
      expect(line('broken').className).toContain('jp-mod-failure');
      expect(line('big').textContent).toBe(
        '0/8 nodes are available: 8 Insufficient nvidia.com/gpu.'
      );
      expect(line('big').title).toBe('Ask for fewer GPUs (--gpus).');
      expect(panel.node.textContent).not.toContain('CleanPodPolicy');
    } finally {
      panel.dispose();
      model.dispose();
    }
  });
});

describe('the job view', () => {
  async function view(job: IJob, commands = new CommandRegistry()) {
    const client = {
      getJob: jest.fn().mockResolvedValue(job),
      events: jest.fn().mockResolvedValue([]),
      progress: jest.fn().mockResolvedValue({ progress: null, history: {} })
    };
    const widget = new JobView({
      name: job.name,
      client: client as unknown as PyTorchJobClient,
      commands,
      trans,
      refreshInterval: 3600
    });
    Widget.attach(widget, document.body);
    await widget.refresh();
    await rendered(widget);
    return widget;
  }

  it('opens with the Failure section: summary, facts, tail, log button', async () => {
    const commands = new CommandRegistry();
    const opened: unknown[] = [];
    commands.addCommand(CommandIDs.openLogs, {
      execute: args => {
        opened.push(args);
      }
    });
    const widget = await view(
      {
        ...FAILED,
        failure: { ...FAILURE, hint: 'Fix the division.' }
      },
      commands
    );
    try {
      const content = widget.node.querySelector('.jp-PyTorchJobView-content')!;
      // First after the header: before the facts, progress and replicas.
      const section = content.children[1] as HTMLElement;
      expect(section.className).toBe('jp-PyTorchJobView-failure');
      expect(section.getAttribute('aria-label')).toBe('Failure');
      expect(
        section.querySelector('.jp-PyTorchJobView-failureSummary')!.textContent
      ).toBe('master-0 exited 1: ZeroDivisionError: division by zero');
      expect(texts(section, 'dt, dd')).toEqual([
        'Replica',
        'master-0',
        'Exit code',
        '1',
        'Reason',
        'Error'
      ]);
      expect(
        section.querySelector('.jp-PyTorchJobView-hint')!.textContent
      ).toBe('Fix the division.');
      expect(section.querySelector('pre')!.textContent).toBe(
        TRACEBACK.join('\n')
      );

      const button = Array.from(section.querySelectorAll('button')).find(
        b => b.textContent === 'Open log at this run'
      )!;
      button.click();
      expect(opened).toEqual([
        { name: 'broken', replica: 'master-0', previous: true }
      ]);

      // The replica row says how it ended, not how it was cleaned up.
      const row = widget.node.querySelector(
        '[data-replica="master-0"]'
      ) as HTMLElement;
      expect(texts(row, 'td')).toEqual([
        'master-0',
        'Deleted',
        '3',
        '1',
        'Error',
        'ZeroDivisionError: division by zero'
      ]);
    } finally {
      widget.dispose();
    }
  });

  it('says when the failing run’s log is gone, and offers no button', async () => {
    const widget = await view({
      ...FAILED,
      failure: { ...FAILURE, logSource: null, signal: 'SIGKILL' }
    });
    try {
      const section = widget.node.querySelector('.jp-PyTorchJobView-failure')!;
      expect(section.querySelector('button')).toBeNull();
      expect(section.textContent).toContain(
        'The log of this run is no longer kept.'
      );
      expect(texts(section, 'dt')).toEqual(['Replica', 'Signal', 'Reason']);
    } finally {
      widget.dispose();
    }
  });

  it('shows what a waiting job waits for, and no Failure section', async () => {
    const widget = await view(PENDING);
    try {
      const line = widget.node.querySelector(
        '.jp-PyTorchJobView-waiting'
      ) as HTMLElement;
      expect(line.textContent).toBe(
        'Waiting: 0/8 nodes are available: 8 Insufficient nvidia.com/gpu.' +
          'Ask for fewer GPUs (--gpus).'
      );
      expect(
        widget.node.querySelector('.jp-PyTorchJobView-failure')
      ).toBeNull();
    } finally {
      widget.dispose();
    }
  });

  it('says a message the job waits for once', async () => {
    const message = 'no operator has picked the job up yet';
    const widget = await view({
      ...PENDING,
      replicas: [],
      message,
      waiting: { reason: 'NoOperator', message, hint: null }
    });
    try {
      expect(texts(widget.node, '[role="status"]')).toEqual([
        'Created',
        `Waiting: ${message}`
      ]);
    } finally {
      widget.dispose();
    }
  });
});
