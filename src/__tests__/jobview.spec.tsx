/**
 * Tests of the job view: TensorBoard's availability, the Spec section.
 */

import { nullTranslator, TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import { PyTorchJobClient } from '../api';
import { JobView } from '../jobview';
import { SpecSection } from '../spec';
import { IJob, IJobTensorBoard } from '../tokens';
import { chineseTranslator } from './chinese';

const trans = nullTranslator.load('jupyter_pytorchjob');

const RUNNING: IJob = {
  name: 'board',
  state: 'Running',
  replicas: [{ name: 'master-0', phase: 'Running', restarts: 0 }],
  nodes: 1,
  gpus: 0,
  created: Date.now() / 1000 - 60,
  started: Date.now() / 1000 - 50,
  logdir: '/mnt/logs/board'
};

async function rendered(widget: Widget): Promise<void> {
  MessageLoop.sendMessage(widget, Widget.Msg.UpdateRequest);
  await (widget as JobView).renderPromise;
  await new Promise(resolve => setTimeout(resolve, 0));
}

/**
 * A job view over a client answering `job`, `tensorBoard` for the job's
 * TensorBoard check.
 */
async function view(
  job: IJob,
  tensorBoard: IJobTensorBoard | Error,
  language: TranslationBundle = trans
): Promise<{ widget: JobView; client: Record<string, jest.Mock> }> {
  const client = {
    getJob: jest.fn().mockResolvedValue(job),
    events: jest.fn().mockResolvedValue([]),
    progress: jest.fn().mockResolvedValue({ progress: null, history: {} }),
    jobTensorBoard:
      tensorBoard instanceof Error
        ? jest.fn().mockRejectedValue(tensorBoard)
        : jest.fn().mockResolvedValue(tensorBoard)
  };
  const widget = new JobView({
    name: job.name,
    client: client as unknown as PyTorchJobClient,
    commands: new CommandRegistry(),
    trans: language,
    refreshInterval: 3600
  });
  Widget.attach(widget, document.body);
  await widget.refresh();
  await rendered(widget);
  return { widget, client };
}

function tensorBoardButton(widget: Widget): HTMLButtonElement {
  return Array.from(widget.node.querySelectorAll('button')).find(
    b => b.textContent === 'TensorBoard'
  ) as HTMLButtonElement;
}

describe('the job view’s TensorBoard button', () => {
  const OUTSIDE =
    "'/mnt/logs/board' resolves to /mnt/logs/board, outside the TensorBoard roots (/srv)";

  it('is disabled, with the server’s reason shown in the view, outside the roots', async () => {
    const { widget, client } = await view(RUNNING, {
      logdir: null,
      problem: OUTSIDE
    });
    try {
      expect(client.jobTensorBoard).toHaveBeenCalledWith('board');
      expect(tensorBoardButton(widget).disabled).toBe(true);
      const note = widget.node.querySelector('[role="note"]')!;
      expect(note.textContent).toBe(`TensorBoard cannot open it: ${OUTSIDE}`);
      // Asked once per log directory, not on every refresh.
      await widget.refresh();
      expect(client.jobTensorBoard).toHaveBeenCalledTimes(1);
    } finally {
      widget.dispose();
    }
  });

  it('gives the server’s reason in the user’s language', async () => {
    const { widget } = await view(
      RUNNING,
      {
        logdir: null,
        problem: OUTSIDE,
        problemCode: 'tb_outside_roots',
        problemParams: {
          path: "'/mnt/logs/board'",
          resolved: '/mnt/logs/board',
          roots: '/srv'
        }
      },
      chineseTranslator()
    );
    try {
      const note = widget.node.querySelector('[role="note"]')!;
      expect(note.textContent).toContain(
        "'/mnt/logs/board' 解析为 /mnt/logs/board，位于 TensorBoard 根目录（/srv）之外"
      );
    } finally {
      widget.dispose();
    }
  });

  it('is enabled, without a note, where TensorBoard can open the directory', async () => {
    const { widget } = await view(RUNNING, {
      logdir: '/srv/volumes/logs/board',
      problem: null
    });
    try {
      expect(tensorBoardButton(widget).disabled).toBe(false);
      expect(widget.node.querySelector('[role="note"]')).toBeNull();
    } finally {
      widget.dispose();
    }
  });

  it('stays enabled when the check itself fails (a click says why)', async () => {
    const { widget } = await view(RUNNING, new Error('offline'));
    try {
      expect(tensorBoardButton(widget).disabled).toBe(false);
    } finally {
      widget.dispose();
    }
  });

  it('is not asked about a job without a log directory', async () => {
    const { widget, client } = await view(
      { ...RUNNING, logdir: null },
      { logdir: null, problem: 'x' }
    );
    try {
      expect(client.jobTensorBoard).not.toHaveBeenCalled();
      expect(tensorBoardButton(widget).disabled).toBe(true);
    } finally {
      widget.dispose();
    }
  });
});

describe('the job view’s Spec section', () => {
  const JOB: IJob = {
    ...RUNNING,
    spec: {
      name: 'board',
      image: 'repo/img:1',
      command: ['python', 'train.py'],
      args: ['--lr', '0.1'],
      nodes: 2,
      gpus: 1,
      memory: '16Gi',
      shm: '8Gi',
      nprocPerNode: 1,
      env: { SEED: '0' },
      pvc: [
        { claim: 'logs', mountPath: '/mnt/logs', readOnly: false },
        { claim: 'data', mountPath: '/data', subPath: 'a', readOnly: true }
      ]
    },
    submitCommand: 'ptjob submit --name board -- python train.py --lr 0.1',
    yaml: 'apiVersion: kubeflow.org/v1\n'
  };

  async function section(job: IJob): Promise<{
    widget: Widget;
    copied: string[];
  }> {
    const copied: string[] = [];
    const widget = ReactWidget.create(
      <SpecSection job={job} trans={trans} copy={text => copied.push(text)} />
    );
    Widget.attach(widget, document.body);
    await rendered(widget);
    return { widget, copied };
  }

  const button = (widget: Widget, text: string) =>
    Array.from(widget.node.querySelectorAll('button')).find(
      b => b.textContent === text
    ) as HTMLButtonElement;

  it('is collapsed, and says what runs where', async () => {
    const { widget } = await section(JOB);
    const details = widget.node.querySelector('details')!;
    expect(details.open).toBe(false);
    expect(details.querySelector('summary')!.textContent).toBe('Spec');
    const facts = Array.from(details.querySelectorAll('dt')).map(dt => [
      dt.textContent,
      dt.nextElementSibling!.textContent
    ]);
    expect(facts).toEqual([
      ['Command', 'python train.py --lr 0.1'],
      ['Image', 'repo/img:1'],
      [
        'Resources',
        '2 nodes · 1 GPU per node · memory 16Gi · /dev/shm 8Gi · 1 process per node'
      ],
      ['Environment', 'SEED=0'],
      ['Volumes', 'logs:/mnt/logs' + 'data:/data:a:ro']
    ]);
    widget.dispose();
  });

  it('copies the ptjob submit line and the YAML', async () => {
    const { widget, copied } = await section(JOB);
    button(widget, 'Copy as ptjob submit').click();
    button(widget, 'Copy YAML').click();
    expect(copied).toEqual([JOB.submitCommand, JOB.yaml]);
    widget.dispose();
  });

  it('offers no command line for a script job, and says why', async () => {
    const { widget, copied } = await section({
      ...JOB,
      spec: { ...JOB.spec, command: [], script: 'print(1)\nprint(2)\n' },
      submitCommand: null
    });
    const copyCommand = button(widget, 'Copy as ptjob submit');
    expect(copyCommand.disabled).toBe(true);
    expect(copyCommand.title).toBe(
      'A job shipped as a script has no command line: copy its YAML'
    );
    expect(widget.node.textContent).toContain('shipped with the job (2 lines)');
    expect(copied).toEqual([]);
    widget.dispose();
  });

  it('is part of the job view', async () => {
    const { widget } = await view(JOB, { logdir: '/x', problem: null });
    expect(widget.node.querySelector('details summary')!.textContent).toBe(
      'Spec'
    );
    widget.dispose();
  });
});
