/**
 * Tests of the job view's actions: TensorBoard's availability.
 */

import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { PyTorchJobClient } from '../api';
import { JobView } from '../jobview';
import { IJob, IJobTensorBoard } from '../tokens';

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
  tensorBoard: IJobTensorBoard | Error
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
    trans,
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
