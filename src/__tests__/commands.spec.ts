/**
 * Tests of the commands in a real JupyterLab shell: a job, its logs and a
 * TensorBoard open once each and are revealed when asked for again; the form
 * opens with the server's defaults; a stopped TensorBoard closes its tabs.
 */

import {
  JupyterFrontEnd,
  LabShell,
  LayoutRestorer
} from '@jupyterlab/application';
import { MainAreaWidget, Notification } from '@jupyterlab/apputils';
import { StateDB } from '@jupyterlab/statedb';
import { acceptDialog, dismissDialog } from '@jupyterlab/testutils';
import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { Widget } from '@lumino/widgets';

import { PyTorchJobClient } from '../api';
import { CommandIDs } from '../commandids';
import { JobForm } from '../form/form';
import { addCommands, ITrackers } from '../commands/index';
import { JobsModel } from '../model';
import { DEFAULT_SETTINGS } from '../settings';
import { TensorBoardsModel } from '../tensorboard/model';
import { IConfig, IJob, ITensorBoard } from '../tokens';
import { IFieldInfo } from '../tokens';
import FIELDS_JSON from './fields.json';

// The server's `fields`, as `GET config` types them.
const FIELDS = FIELDS_JSON as Record<string, IFieldInfo>;

const trans = nullTranslator.load('jupyter_pytorchjob');

const JOB: IJob = {
  name: 'ddp',
  state: 'Running',
  replicas: [
    { name: 'master-0', phase: 'Running', restarts: 0 },
    { name: 'worker-0', phase: 'Running', restarts: 0 }
  ],
  nodes: 2,
  gpus: 0,
  created: 0
};

/**
 * A job whose master raised and was restarted once: its traceback is in its
 * previous container.
 */
const BROKEN: IJob = {
  ...JOB,
  name: 'broken',
  state: 'Failed',
  failure: {
    replica: 'master-0',
    exitCode: 1,
    signal: null,
    reason: 'Error',
    message: 'ZeroDivisionError: division by zero',
    tail: ['ZeroDivisionError: division by zero'],
    logSource: 'previous',
    hint: null
  }
};

const BOARD: ITensorBoard = {
  id: 'tb1',
  logdir: '/runs',
  started: 1704067200
} as ITensorBoard;

const CONFIG = {
  backend: 'local',
  defaults: { image: 'img', shm: '2Gi', gpuResource: 'nvidia.com/gpu' },
  fields: FIELDS
} as unknown as IConfig;

/**
 * A WebSocket that never connects: the log viewer's stream waits on it.
 */
class IdleSocket {
  constructor(readonly url: string) {}
  close(): void {
    // Nothing to close.
  }
  send(): void {
    // Nothing to send.
  }
  onopen: unknown = null;
  onmessage: unknown = null;
  onclose: unknown = null;
  onerror: unknown = null;
  readyState = 0;
}

/**
 * The REST client's answers, without a server (the REST client has its own
 * tests against request handlers; these are about the shell).
 */
function fakeClient() {
  return {
    serverSettings: { WebSocket: IdleSocket },
    getJob: jest.fn().mockResolvedValue(JOB),
    events: jest.fn().mockResolvedValue([]),
    logsUrl: jest.fn().mockReturnValue('ws://nowhere/logs'),
    volumes: jest.fn().mockResolvedValue([]),
    render: jest.fn().mockReturnValue(new Promise(() => undefined)),
    startTensorBoard: jest.fn().mockResolvedValue(BOARD),
    isTensorBoardRunning: jest.fn().mockResolvedValue(true),
    tensorBoardUrl: jest.fn().mockReturnValue('about:blank'),
    listTensorBoards: jest.fn().mockResolvedValue([BOARD]),
    stopTensorBoard: jest.fn().mockResolvedValue(undefined),
    setSuspended: jest.fn(),
    cloneBody: jest.fn().mockResolvedValue({
      name: 'ddp-2',
      command: ['python', 'train.py'],
      logdir: '/mnt/logs/ddp-2'
    }),
    progress: jest.fn().mockResolvedValue({ progress: null, history: {} }),
    compare: jest.fn().mockResolvedValue({
      jobs: [
        { name: 'ddp', state: 'Running', logdir: '/runs/ddp' },
        { name: 'other', state: 'Succeeded', logdir: '/runs/other' }
      ],
      parameters: [],
      metrics: []
    })
  };
}

/**
 * Resolves once `condition` holds; fails after 5 s.
 */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) {
      throw new Error(`still waiting for ${condition}`);
    }
    await new Promise(resolve => setTimeout(resolve, 10));
  }
}

describe('the commands', () => {
  let shell: LabShell;
  let commands: CommandRegistry;
  let client: ReturnType<typeof fakeClient>;
  let trackers: ITrackers;
  let tensorboards: TensorBoardsModel;
  let model: JobsModel;

  const mainIds = () => Array.from(shell.widgets('main')).map(w => w.id);

  /**
   * The tab in front (jsdom has no focus to say which widget is current).
   */
  const shown = () =>
    Array.from(shell.widgets('main')).filter(w => w.isVisible);

  beforeEach(async () => {
    shell = new LabShell();
    Widget.attach(shell, document.body);
    commands = new CommandRegistry();
    // The shell adds widgets once its layout is restored (here: an empty one).
    await shell.restoreLayout(
      'multiple-document',
      new LayoutRestorer({
        connector: new StateDB(),
        first: Promise.resolve(),
        registry: commands
      })
    );
    client = fakeClient();
    model = new JobsModel({
      fetchJobs: () => Promise.resolve([JOB, { ...JOB, name: 'other' }]),
      refreshInterval: 3600
    });
    tensorboards = new TensorBoardsModel({
      list: () => client.listTensorBoards(),
      stop: id => client.stopTensorBoard(id),
      refreshInterval: 3600
    });
    trackers = register(commands, model);
  });

  /**
   * The commands over a job list, in the shell.
   */
  const register = (registry: CommandRegistry, jobs: JobsModel) =>
    addCommands({
      app: { commands: registry, shell } as unknown as JupyterFrontEnd,
      client: client as unknown as PyTorchJobClient,
      model: jobs,
      trans,
      settings: () => DEFAULT_SETTINGS,
      editorServices: null,
      config: () => Promise.resolve(CONFIG),
      fileBrowser: null,
      docManager: null,
      tensorboards,
      panelId: 'panel'
    });

  afterEach(() => {
    // Detached first: a widget disposed in place resizes its neighbours'
    // toolbars, whose throttlers may already be gone.
    Widget.detach(shell);
    for (const widget of Array.from(shell.widgets('main'))) {
      widget.dispose();
    }
    shell.dispose();
  });

  it('open a job once, and reveal it when asked again', async () => {
    await commands.execute(CommandIDs.openJob, { name: 'ddp' });
    await commands.execute(CommandIDs.openLogs, { name: 'ddp' });
    await commands.execute(CommandIDs.openJob, { name: 'ddp' });
    expect(mainIds()).toEqual(['pytorchjob-job-ddp', 'pytorchjob-logs-ddp']);
    const [job] = shown();
    expect(shown()).toHaveLength(1);
    expect(job.id).toBe('pytorchjob-job-ddp');
    expect(job.title.label).toBe('ddp');
    expect(job.title.caption).toBe('PyTorch job ddp');
    expect(trackers.jobs.size).toBe(1);
  });

  it('open logs once per job, on the replica asked for', async () => {
    await commands.execute(CommandIDs.openLogs, { name: 'ddp' });
    await commands.execute(CommandIDs.openJob, { name: 'ddp' });
    await commands.execute(CommandIDs.openLogs, {
      name: 'ddp',
      replica: 'worker-0'
    });
    expect(trackers.logs.size).toBe(1);
    const logs = trackers.logs.find(() => true)!;
    expect(shown()).toEqual([logs]);
    expect(logs.title.label).toBe('Logs: ddp');
    expect(logs.content.lines.replica).toBe('worker-0');
  });

  it('open a failed job’s logs on the run that failed, saying so; the user’s choice stands', async () => {
    const failed = new JobsModel({
      fetchJobs: () => Promise.resolve([BROKEN]),
      refreshInterval: 3600
    });
    await failed.refresh();
    const commands2 = new CommandRegistry();
    const trackers2 = register(commands2, failed);
    await commands2.execute(CommandIDs.openLogs, { name: 'broken' });
    const viewer = trackers2.logs.find(() => true)!.content;
    expect(viewer.previous).toBe(true);
    expect(viewer.why).toBe(
      'Showing the run that failed: the previous container of master-0.'
    );
    expect(client.logsUrl).toHaveBeenLastCalledWith(
      'broken',
      expect.objectContaining({ previous: true, follow: false })
    );
    // The user unticks Previous container: the current run, no reason shown.
    viewer.previous = false;
    expect(viewer.why).toBe('');
    expect(client.logsUrl).toHaveBeenLastCalledWith(
      'broken',
      expect.objectContaining({ previous: false, follow: true })
    );
    // Opened again without asking: the user's choice stands ...
    await commands2.execute(CommandIDs.openLogs, { name: 'broken' });
    expect(viewer.previous).toBe(false);
    // ... until the job view's "Open log at this run" asks for the failing run.
    await commands2.execute(CommandIDs.openLogs, {
      name: 'broken',
      replica: 'master-0',
      previous: true
    });
    expect(trackers2.logs.size).toBe(1);
    expect(viewer.previous).toBe(true);
    expect(viewer.lines.replica).toBe('master-0');
    expect(viewer.why).toBe(
      'Showing the run that failed: the previous container of master-0.'
    );
    // Each line's time: the log is read again with the times, once.
    const saved = jest.fn();
    viewer.viewOptionsChanged.connect(saved);
    const reads = (client.logsUrl as jest.Mock).mock.calls.length;
    viewer.setTimestamps(true);
    expect(client.logsUrl).toHaveBeenLastCalledWith(
      'broken',
      expect.objectContaining({ timestamps: true })
    );
    expect((client.logsUrl as jest.Mock).mock.calls.length).toBe(reads + 1);
    viewer.setTimestamps(false);
    viewer.setTimestamps(true);
    expect((client.logsUrl as jest.Mock).mock.calls.length).toBe(reads + 1);
    expect(viewer.viewOptions).toEqual({
      wrap: false,
      onlyMatching: false,
      timestamps: true
    });
    expect(saved).toHaveBeenCalledTimes(3);
    failed.dispose();
  });

  it('notify that a job submitted here failed, and why', async () => {
    const failed = new JobsModel({
      fetchJobs: () => Promise.resolve([BROKEN]),
      refreshInterval: 3600
    });
    register(new CommandRegistry(), failed);
    const before = Notification.manager.count;
    failed.track('broken');
    await until(() => Notification.manager.count > before);
    const notice = Notification.manager.notifications[0];
    expect(notice.type).toBe('error');
    expect(notice.message).toBe(
      'PyTorch job broken failed: master-0 exited 1: ZeroDivisionError: division by zero'
    );
    expect(notice.options.autoClose).toBe(false);
    failed.dispose();
  });

  it('suspend a job from its view, then resume it', async () => {
    await commands.execute(CommandIDs.openJob, { name: 'ddp' });
    const view = trackers.jobs.find(() => true)!.content;
    const labels = () =>
      Array.from(view.node.querySelectorAll('button')).map(b => b.textContent);
    const click = (label: string) =>
      Array.from(view.node.querySelectorAll('button'))
        .find(b => b.textContent === label)!
        .click();
    const state = () =>
      view.node.querySelector('[role="status"]')?.textContent ?? '';

    await until(() => state() === 'Running');
    expect(labels()).toContain('Suspend');
    expect(labels()).not.toContain('Resume');

    // Cancelled: nothing happens.
    click('Suspend');
    await dismissDialog();
    expect(client.setSuspended).not.toHaveBeenCalled();

    // Confirmed: pending until the job says it is suspended.
    const suspended: IJob = { ...JOB, state: 'Suspended' };
    let answer: (job: IJob) => void = () => undefined;
    client.setSuspended.mockReturnValue(
      new Promise<IJob>(resolve => (answer = resolve))
    );
    click('Suspend');
    await until(() => document.querySelector('.jp-Dialog') !== null);
    expect(document.querySelector('.jp-Dialog')!.textContent).toContain(
      'Resuming starts them again from scratch'
    );
    await acceptDialog();
    await until(() => labels().includes('Suspending…'));
    const pending = Array.from(view.node.querySelectorAll('button')).find(
      b => b.textContent === 'Suspending…'
    )!;
    expect(pending.disabled).toBe(true);
    expect(client.setSuspended).toHaveBeenCalledWith('ddp', true);
    client.getJob.mockResolvedValue(suspended);
    answer(suspended);
    await until(() => state() === 'Suspended');
    await until(() => labels().includes('Resume'));
    expect(labels()).not.toContain('Suspend');
    expect(labels()).not.toContain('Suspending…');

    client.setSuspended.mockResolvedValue(JOB);
    client.getJob.mockResolvedValue(JOB);
    click('Resume');
    await until(() => state() === 'Running');
    expect(client.setSuspended).toHaveBeenLastCalledWith('ddp', false);
    expect(labels()).toContain('Suspend');
  });

  it('offer neither suspend nor resume for a finished job', async () => {
    client.getJob.mockResolvedValue({ ...JOB, state: 'Succeeded' });
    await commands.execute(CommandIDs.openJob, { name: 'ddp' });
    const view = trackers.jobs.find(() => true)!.content;
    await until(
      () =>
        view.node.querySelector('[role="status"]')?.textContent === 'Succeeded'
    );
    const labels = Array.from(view.node.querySelectorAll('button')).map(
      b => b.textContent
    );
    expect(labels).toContain('Delete');
    expect(labels).not.toContain('Suspend');
    expect(labels).not.toContain('Resume');
    expect(commands.label(CommandIDs.suspendJob, { name: 'ddp' })).toBe(
      'Suspend job ddp'
    );
  });

  it('open one TensorBoard tab per target', async () => {
    await commands.execute(CommandIDs.openTensorBoard, { logdir: '/runs' });
    await commands.execute(CommandIDs.openJob, { name: 'ddp' });
    await commands.execute(CommandIDs.openTensorBoard, { logdir: '/runs' });
    expect(client.startTensorBoard).toHaveBeenCalledTimes(1);
    expect(trackers.tensorboards.size).toBe(1);
    expect(shown()).toEqual([trackers.tensorboards.find(() => true)]);
  });

  it('compare the jobs asked for, else the panel’s selection, in one tab each', async () => {
    expect(commands.isEnabled(CommandIDs.compareJobs)).toBe(false);
    await commands.execute(CommandIDs.compareJobs, { names: ['ddp', 'other'] });
    await commands.execute(CommandIDs.compareJobs, { names: ['ddp', 'other'] });
    const tabs = mainIds().filter(id => id.startsWith('pytorchjob-compare-'));
    expect(tabs).toEqual(['pytorchjob-compare-ddp,other']);
    await until(() => client.compare.mock.calls.length > 0);
    expect(client.compare).toHaveBeenCalledWith(['ddp', 'other']);
    expect(
      commands.label(CommandIDs.compareJobs, { names: ['a', 'b', 'c'] })
    ).toBe('Compare 3 jobs');
    // One job is not a comparison: nothing opens.
    await commands.execute(CommandIDs.compareJobs, { names: ['ddp'] });
    expect(
      mainIds().filter(id => id.startsWith('pytorchjob-compare-'))
    ).toHaveLength(1);
    // Without names: the jobs selected in the panel.
    await model.refresh();
    model.setSelected('other', true);
    model.setSelected('ddp', true);
    expect(commands.isEnabled(CommandIDs.compareJobs)).toBe(true);
    expect(commands.label(CommandIDs.compareJobs)).toBe('Compare 2 jobs');
  });

  it('open one TensorBoard over several jobs, a run per job', async () => {
    await commands.execute(CommandIDs.openTensorBoard, {
      names: ['ddp', 'other']
    });
    expect(client.startTensorBoard).toHaveBeenCalledWith({
      jobs: ['ddp', 'other']
    });
    expect(trackers.tensorboards.find(() => true)!.title.label).toBe(
      'TensorBoard: ddp, other'
    );
  });

  it('close the tabs of a TensorBoard once it is stopped', async () => {
    await commands.execute(CommandIDs.openTensorBoard, { logdir: '/runs' });
    const tab = trackers.tensorboards.find(() => true)!;
    expect(tab.board?.id).toBe('tb1');
    await commands.execute(CommandIDs.stopTensorBoard, { id: 'tb1' });
    expect(client.stopTensorBoard).toHaveBeenCalledWith('tb1');
    expect(tab.isDisposed).toBe(true);
  });

  it('open a new form each time, with the server defaults', async () => {
    await commands.execute(CommandIDs.newJob, {
      command: ['python', 'train.py']
    });
    await commands.execute(CommandIDs.newJob, {});
    const forms = Array.from(shell.widgets('main'));
    expect(forms).toHaveLength(2);
    // The tab names the kind the form makes (#32).
    expect(forms.map(w => w.title.label)).toEqual([
      'New PyTorchJob',
      'New PyTorchJob'
    ]);
    expect(forms[0].id).toMatch(/^pytorchjob-form-/);
    expect(forms[0].id).not.toBe(forms[1].id);
    const models = forms.map(
      w => (w as MainAreaWidget<JobForm>).content.model.state
    );
    expect(models[0]).toMatchObject({
      image: 'img',
      command: 'python train.py'
    });
    expect(models[1]).toMatchObject({ image: 'img', command: '' });
  });

  it('clone a job into a form named <job>-N by the server', async () => {
    await commands.execute(CommandIDs.cloneJob, { name: 'ddp' });
    expect(client.cloneBody).toHaveBeenCalledWith('ddp');
    const form = Array.from(
      shell.widgets('main')
    )[0] as MainAreaWidget<JobForm>;
    expect(form.content.model.state).toMatchObject({
      name: 'ddp-2',
      command: 'python train.py',
      logdir: '/mnt/logs/ddp-2'
    });
  });

  it('resume from a checkpoint: the server makes the clone, env included', async () => {
    client.cloneBody.mockResolvedValueOnce({
      name: 'ddp-2',
      command: ['python', 'train.py'],
      env: { SEED: '1', PTJOB_RESUME_FROM: '/ckpt/7' }
    });
    await commands.execute(CommandIDs.cloneJob, {
      name: 'ddp',
      resumeFrom: '/ckpt/7'
    });
    expect(client.cloneBody).toHaveBeenCalledWith('ddp', '/ckpt/7');
    const form = Array.from(
      shell.widgets('main')
    )[0] as MainAreaWidget<JobForm>;
    expect(form.content.model.body).toMatchObject({
      name: 'ddp-2',
      env: { SEED: '1', PTJOB_RESUME_FROM: '/ckpt/7' }
    });
  });
});
