/**
 * Tests of durations, ages, states and error messages.
 */

import { nullTranslator } from '@jupyterlab/translation';

import {
  describeNodes,
  formatAge,
  formatDuration,
  formatError,
  formatTime,
  isFinished,
  jobDuration,
  stateClass,
  stateLabel
} from '../format';
import { PyTorchJobAPIError } from '../request';
import { IJob } from '../tokens';

const trans = nullTranslator.load('jupyter_pytorchjob');

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [45.9, '45s'],
    [60, '1m 0s'],
    [200, '3m 20s'],
    [3600, '1h 0m'],
    [7500, '2h 5m'],
    [86400 * 3 + 3600 * 4 + 59, '3d 4h']
  ])('%p seconds read %p', (seconds, text) => {
    expect(formatDuration(seconds, trans)).toBe(text);
  });

  it('shows a dash when unknown', () => {
    expect(formatDuration(null, trans)).toBe('—');
    expect(formatDuration(undefined, trans)).toBe('—');
    expect(formatDuration(NaN, trans)).toBe('—');
  });

  it('never goes negative', () => {
    expect(formatDuration(-5, trans)).toBe('0s');
  });
});

describe('formatAge', () => {
  const now = 1_000_000 * 1000;
  it.each([
    [now / 1000 - 3, 'just now'],
    [now / 1000 - 30, '30s ago'],
    [now / 1000 - 150, '2m ago'],
    [now / 1000 - 7200, '2h ago'],
    [now / 1000 - 86400 * 2, '2d ago']
  ])('%p reads %p', (epoch, text) => {
    expect(formatAge(epoch, now, trans)).toBe(text);
  });

  it('shows a dash when unknown', () => {
    expect(formatAge(null, now, trans)).toBe('—');
  });
});

describe('formatTime', () => {
  afterEach(() => document.documentElement.removeAttribute('lang'));

  it('writes dates in the locale of the interface, not the browser’s', () => {
    const epoch = Date.UTC(2026, 10, 27, 9, 8, 53) / 1000;
    document.documentElement.lang = 'zh-CN';
    const chinese = formatTime(epoch);
    expect(chinese).toBe(
      new Intl.DateTimeFormat('zh-CN', {
        dateStyle: 'short',
        timeStyle: 'medium'
      }).format(epoch * 1000)
    );
    expect(chinese).toMatch(/^2026\/11\/27/);
    document.documentElement.lang = 'en-US';
    expect(formatTime(epoch)).toMatch(/^11\/27\/26/);
    expect(formatTime(null)).toBe('—');
  });
});

describe('jobDuration', () => {
  const job: IJob = {
    name: 'a',
    state: 'Running',
    replicas: [],
    nodes: 1,
    gpus: 0,
    created: 100
  };

  it('is null before the start', () => {
    expect(jobDuration(job, 200_000)).toBeNull();
  });

  it('runs to now while running, to the finish once finished', () => {
    expect(jobDuration({ ...job, started: 150 }, 200_000)).toBe(50);
    expect(jobDuration({ ...job, started: 150, finished: 170 }, 200_000)).toBe(
      20
    );
  });
});

describe('states', () => {
  it('knows which states are final', () => {
    expect(isFinished('Succeeded')).toBe(true);
    expect(isFinished('Failed')).toBe(true);
    expect(isFinished('Running')).toBe(false);
    expect(isFinished('Restarting')).toBe(false);
  });

  it('has a badge class per state', () => {
    expect(stateClass('Restarting')).toBe(
      'jp-PyTorchJob-badge jp-mod-restarting'
    );
  });

  it('labels known states and passes others through', () => {
    expect(stateLabel('Suspended', trans)).toBe('Suspended');
    expect(stateLabel('Weird', trans)).toBe('Weird');
  });
});

describe('describeNodes', () => {
  it('spells out master and workers', () => {
    expect(describeNodes(1, trans)).toBe('1 node = 1 master');
    expect(describeNodes(2, trans)).toBe('2 nodes = 1 master + 1 worker');
    expect(describeNodes(3, trans)).toBe('3 nodes = 1 master + 2 workers');
    // A TrainJob has no master: node-0 leads.
    expect(describeNodes(1, trans, 'TrainJob')).toBe('1 node: node-0 leads');
    expect(describeNodes(3, trans, 'TrainJob')).toBe('3 nodes: node-0 leads');
  });

  it('explains what is allowed for nonsense', () => {
    expect(describeNodes(0, trans)).toMatch(/At least 1 node/);
    expect(describeNodes(NaN, trans)).toMatch(/At least 1 node/);
  });
});

describe('formatError', () => {
  it('says when the server cannot be reached', () => {
    const error = new PyTorchJobAPIError(0, 'Failed to fetch');
    expect(formatError(error, trans)).toBe(
      'Cannot reach the Jupyter server: Failed to fetch'
    );
  });

  it('explains a bare 404 as a disabled server extension', () => {
    expect(
      formatError(new PyTorchJobAPIError(404, 'Not Found'), trans)
    ).toMatch(/server extension is not enabled/);
  });

  it('shows the message of a missing job as is', () => {
    expect(
      formatError(new PyTorchJobAPIError(404, "job 'x' not found"), trans)
    ).toBe("job 'x' not found");
  });

  it('shows the status of server errors', () => {
    expect(formatError(new PyTorchJobAPIError(500, 'boom'), trans)).toBe(
      'Server error (HTTP 500): boom'
    );
  });

  it('handles other errors', () => {
    expect(formatError(new Error('plain'), trans)).toBe('plain');
    expect(formatError('text', trans)).toBe('text');
  });
});
