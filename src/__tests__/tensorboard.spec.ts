/**
 * Tests of the TensorBoard tab's parts: TensorBoard's settings and reload
 * button, the list of running TensorBoards, and the tab itself.
 */

import { nullTranslator } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import { PyTorchJobAPIError } from '../request';
import {
  enableAutoReload,
  reloadData,
  RELOAD_BUTTON_SELECTOR,
  TENSORBOARD_SETTINGS_KEY
} from '../tensorboard/frame';
import { boardArgs, TensorBoardsModel } from '../tensorboard/model';
import { targetKey, TensorBoardView } from '../tensorboard/view';
import { ITensorBoard } from '../tokens';

const trans = nullTranslator.load('jupyter_pytorchjob');

function board(id: string, logdir = `/data/${id}`): ITensorBoard {
  return { id, url: `pytorchjob/tensorboard/${id}/`, logdir, jobs: [] };
}

describe('enableAutoReload', () => {
  beforeEach(() => window.localStorage.clear());

  it("turns TensorBoard's reloading on when it was never set", () => {
    expect(enableAutoReload(window.localStorage)).toBe(true);
    expect(
      JSON.parse(window.localStorage.getItem(TENSORBOARD_SETTINGS_KEY)!)
    ).toEqual({ autoReload: true });
  });

  it('keeps the other settings', () => {
    window.localStorage.setItem(
      TENSORBOARD_SETTINGS_KEY,
      JSON.stringify({ scalarSmoothing: 0.3, theme: 'dark' })
    );
    expect(enableAutoReload(window.localStorage)).toBe(true);
    expect(
      JSON.parse(window.localStorage.getItem(TENSORBOARD_SETTINGS_KEY)!)
    ).toEqual({ scalarSmoothing: 0.3, theme: 'dark', autoReload: true });
  });

  it('respects a user who turned reloading off', () => {
    const stored = JSON.stringify({ autoReload: false });
    window.localStorage.setItem(TENSORBOARD_SETTINGS_KEY, stored);
    expect(enableAutoReload(window.localStorage)).toBe(false);
    expect(window.localStorage.getItem(TENSORBOARD_SETTINGS_KEY)).toBe(stored);
  });

  it('replaces unreadable settings', () => {
    window.localStorage.setItem(TENSORBOARD_SETTINGS_KEY, '{not json');
    expect(enableAutoReload(window.localStorage)).toBe(true);
    expect(
      JSON.parse(window.localStorage.getItem(TENSORBOARD_SETTINGS_KEY)!)
    ).toEqual({ autoReload: true });
  });
});

describe('reloadData', () => {
  function page(disabled = false): { doc: Document; clicks: jest.Mock } {
    const doc = document.implementation.createHTMLDocument('tb');
    const header = doc.createElement('app-header-reload');
    const button = doc.createElement('button');
    button.className = 'reload-button';
    button.disabled = disabled;
    const clicks = jest.fn();
    button.addEventListener('click', clicks);
    header.appendChild(button);
    doc.body.appendChild(header);
    expect(doc.querySelector(RELOAD_BUTTON_SELECTOR)).toBe(button);
    return { doc, clicks };
  }

  it("presses TensorBoard's reload button", () => {
    const { doc, clicks } = page();
    expect(reloadData(doc)).toBe(true);
    expect(clicks).toHaveBeenCalledTimes(1);
  });

  it('does not press it while TensorBoard is loading', () => {
    const { doc, clicks } = page(true);
    expect(reloadData(doc)).toBe(true);
    expect(clicks).not.toHaveBeenCalled();
  });

  it('says when the page has no such button', () => {
    expect(reloadData(null)).toBe(false);
    expect(
      reloadData(document.implementation.createHTMLDocument('other'))
    ).toBe(false);
  });
});

describe('TensorBoardsModel', () => {
  let answers: Array<ITensorBoard[] | Error>;
  let stops: string[];
  let stopError: Error | null;
  let model: TensorBoardsModel;

  beforeEach(() => {
    answers = [];
    stops = [];
    stopError = null;
    model = new TensorBoardsModel({
      list: () => {
        const next = answers.shift() ?? [];
        return next instanceof Error
          ? Promise.reject(next)
          : Promise.resolve(next);
      },
      stop: async id => {
        stops.push(id);
        if (stopError) {
          throw stopError;
        }
      },
      refreshInterval: 3600
    });
  });

  afterEach(() => model.dispose());

  it('lists, and keeps the error of a failed refresh', async () => {
    answers.push([board('a'), board('b')], new PyTorchJobAPIError(500, 'x'));
    await model.refresh();
    expect(model.boards.map(b => b.id)).toEqual(['a', 'b']);
    expect(model.error).toBeNull();
    await model.refresh();
    expect(model.error?.status).toBe(500);
    expect(model.boards.map(b => b.id)).toEqual(['a', 'b']);
  });

  it('stops one and says so', async () => {
    answers.push([board('a'), board('b')]);
    await model.refresh();
    const stopped = jest.fn();
    model.stopped.connect((_, id) => stopped(id));
    await model.stop('a');
    expect(stops).toEqual(['a']);
    expect(model.boards.map(b => b.id)).toEqual(['b']);
    expect(stopped).toHaveBeenCalledWith('a');
  });

  it('treats one already gone (404) as stopped', async () => {
    answers.push([board('a')]);
    await model.refresh();
    stopError = new PyTorchJobAPIError(404, "no TensorBoard 'a'");
    await model.stop('a');
    expect(model.boards).toEqual([]);
  });

  it('passes on other failures and keeps the board', async () => {
    answers.push([board('a')]);
    await model.refresh();
    stopError = new PyTorchJobAPIError(500, 'boom');
    await expect(model.stop('a')).rejects.toThrow('boom');
    expect(model.boards.map(b => b.id)).toEqual(['a']);
  });
});

describe('boardArgs', () => {
  const board = (extra: Partial<ITensorBoard>): ITensorBoard => ({
    id: 'x',
    url: 'pytorchjob/tensorboard/x/',
    logdir: '/runs',
    ...extra
  });

  it('opens a running TensorBoard again as it was asked for', () => {
    // One job's TensorBoard (its run named after it) is that job's tab.
    expect(boardArgs(board({ runs: { a: '/runs/a' } }))).toEqual({
      name: 'a'
    });
    expect(boardArgs(board({ runs: { a: '/runs/a', b: '/runs/b' } }))).toEqual({
      names: ['a', 'b']
    });
    expect(boardArgs(board({ runs: null }))).toEqual({ logdir: '/runs' });
  });
});

describe('TensorBoardView', () => {
  function view(
    start: () => Promise<ITensorBoard>,
    stop = jest.fn(async (_id: string) => undefined),
    isRunning = async (_id: string) => true
  ): TensorBoardView {
    return new TensorBoardView({
      target: { job: 'cnn' },
      trans,
      start,
      stop,
      isRunning,
      url: b => `/base/${b.url}`,
      describeError: reason => `failed: ${(reason as Error).message}`,
      refreshInterval: 0
    });
  }

  beforeEach(() => window.localStorage.clear());

  it('shows one scalar: the time series filtered to its tag', async () => {
    const widget = view(async () => board('abc'));
    await widget.showScalar('loss/train');
    expect(widget.frame?.getAttribute('src')).toBe(
      '/base/pytorchjob/tensorboard/abc/?tagFilter=loss%2Ftrain#timeseries'
    );
    widget.dispose();
  });

  it('loads the page once TensorBoard answers, with reloading on', async () => {
    const widget = view(async () => board('abc'));
    expect(widget.title.label).toBe('TensorBoard: cnn');
    const started = await widget.started;
    expect(started.id).toBe('abc');
    expect(widget.frame?.getAttribute('src')).toBe(
      '/base/pytorchjob/tensorboard/abc/'
    );
    expect(widget.frame?.getAttribute('sandbox')).toContain(
      'allow-same-origin'
    );
    expect(widget.node.dataset.tensorboard).toBe('abc');
    expect(
      JSON.parse(window.localStorage.getItem(TENSORBOARD_SETTINGS_KEY)!)
    ).toEqual({ autoReload: true });
    widget.dispose();
  });

  it('shows why TensorBoard could not start, with Retry', async () => {
    let fails = true;
    const start = jest.fn(async () => {
      if (fails) {
        throw new Error('claim data is not mounted');
      }
      return board('abc');
    });
    const widget = view(start);
    const failures: (string | null)[] = [];
    widget.failureChanged.connect((_, failure) => failures.push(failure));
    Widget.attach(widget, document.body);
    await expect(widget.started).rejects.toThrow(
      'failed: claim data is not mounted'
    );
    await widget.revealed;
    expect(widget.failure).toBe('failed: claim data is not mounted');
    expect(widget.title.caption).toBe('failed: claim data is not mounted');
    const failed = () =>
      widget.node.querySelector('.jp-PyTorchJobTensorBoard-failed');
    expect(failed()!.textContent).toContain('claim data is not mounted');
    // The toolbar stays (MainAreaWidget's own error dropped it).
    expect(widget.toolbar.isDisposed).toBe(false);
    expect(widget.frame?.getAttribute('src') ?? '').toBe('');

    fails = false;
    failed()!.querySelector('button')!.click();
    expect(await widget.started).toEqual(board('abc'));
    expect(start).toHaveBeenCalledTimes(2);
    expect(failed()).toBeNull();
    expect(widget.failure).toBeNull();
    expect(failures).toEqual(['failed: claim data is not mounted', null]);
    expect(widget.frame?.getAttribute('src')).toBe(
      '/base/pytorchjob/tensorboard/abc/'
    );
    widget.dispose();
  });

  it('restored after a failure: shows it, starts nothing until Retry', async () => {
    const start = jest.fn(async () => board('abc'));
    const widget = new TensorBoardView({
      target: { job: 'cnn' },
      trans,
      start,
      stop: async () => undefined,
      isRunning: async () => true,
      url: b => `/base/${b.url}`,
      describeError: reason => String(reason),
      refreshInterval: 0,
      failure: 'job cnn has no log directory'
    });
    Widget.attach(widget, document.body);
    await widget.revealed;
    await expect(widget.started).rejects.toThrow('no log directory');
    expect(start).not.toHaveBeenCalled();
    const failed = widget.node.querySelector(
      '.jp-PyTorchJobTensorBoard-failed'
    )!;
    expect(failed.textContent).toContain('job cnn has no log directory');
    failed.querySelector('button')!.click();
    expect(await widget.started).toEqual(board('abc'));
    expect(start).toHaveBeenCalledTimes(1);
    expect(widget.failure).toBeNull();
    widget.dispose();
  });

  it('stops its TensorBoard and closes', async () => {
    const stop = jest.fn(async (_id: string) => undefined);
    const widget = view(async () => board('abc'), stop);
    await widget.started;
    await widget.stopBoard();
    expect(stop).toHaveBeenCalledWith('abc');
    expect(widget.isDisposed).toBe(true);
  });

  it('notices a TensorBoard stopped meanwhile and starts it again', async () => {
    let running = true;
    const start = jest.fn(async () => board('abc'));
    const widget = view(start, undefined, async () => running);
    Widget.attach(widget, document.body);
    await widget.started;
    await widget.refresh();
    expect(widget.isStopped).toBe(false);

    running = false; // culled after idling
    await widget.refresh();
    expect(widget.isStopped).toBe(true);
    const notice = widget.node.querySelector(
      '.jp-PyTorchJobTensorBoard-stopped'
    );
    expect(notice?.textContent).toContain('has stopped');

    running = true;
    notice!.querySelector('button')!.click();
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(start).toHaveBeenCalledTimes(2);
    expect(widget.isStopped).toBe(false);
    expect(
      widget.node.querySelector('.jp-PyTorchJobTensorBoard-stopped')
    ).toBeNull();
    expect(widget.frame?.getAttribute('src')).toBe(
      '/base/pytorchjob/tensorboard/abc/'
    );
    widget.dispose();
  });

  it('Reload starts a stopped TensorBoard again', async () => {
    let running = true;
    const start = jest.fn(async () => board('abc'));
    const widget = view(start, undefined, async () => running);
    await widget.started;
    running = false;
    await widget.reload();
    expect(start).toHaveBeenCalledTimes(2);
    expect(widget.isStopped).toBe(false);
    widget.dispose();
  });

  it('keys the same job or directory alike', () => {
    expect(targetKey({ job: 'a' })).toBe(targetKey({ job: 'a' }));
    expect(targetKey({ job: 'a' })).not.toBe(targetKey({ logdir: 'a' }));
  });
});
