/**
 * Tests of the job list model.
 */

import { JobsModel } from '../model';
import { PyTorchJobAPIError } from '../request';
import { IJob, JobState } from '../tokens';

function job(name: string, state: JobState): IJob {
  return { name, state, replicas: [], nodes: 1, gpus: 0, created: 0 };
}

describe('JobsModel', () => {
  let answers: Array<IJob[] | Error>;
  let model: JobsModel;

  beforeEach(() => {
    answers = [];
    model = new JobsModel({
      fetchJobs: () => {
        const next = answers.shift() ?? [];
        return next instanceof Error
          ? Promise.reject(next)
          : Promise.resolve(next);
      },
      refreshInterval: 3600
    });
  });

  afterEach(() => {
    model.dispose();
  });

  it('loads the list on refresh', async () => {
    const changed = jest.fn();
    model.changed.connect(changed);
    expect(model.loaded).toBe(false);
    answers.push([job('a', 'Running')]);
    await model.refresh();
    expect(model.loaded).toBe(true);
    expect(model.jobs.map(j => j.name)).toEqual(['a']);
    expect(model.find('a')?.state).toBe('Running');
    expect(changed).toHaveBeenCalled();
  });

  it('keeps the error of a failed refresh, and clears it after a success', async () => {
    answers.push(new PyTorchJobAPIError(500, 'boom'), [job('a', 'Running')]);
    await model.refresh();
    expect(model.error?.message).toBe('boom');
    await model.refresh();
    expect(model.error).toBeNull();
  });

  it('wraps unknown failures', async () => {
    answers.push(new Error('offline'));
    await model.refresh();
    expect(model.error).toBeInstanceOf(PyTorchJobAPIError);
    expect(model.error?.status).toBe(0);
  });

  it('tells once when a tracked job finishes', async () => {
    const finished = jest.fn();
    model.jobFinished.connect((_, j) => finished(j.name, j.state));
    // track() refreshes at once, and so does this test.
    answers.push(
      [job('a', 'Running'), job('b', 'Running')],
      [job('a', 'Running'), job('b', 'Running')]
    );
    model.track('a');
    await model.refresh();
    expect(model.tracked.has('a')).toBe(true);
    answers.push([job('a', 'Failed'), job('b', 'Succeeded')]);
    await model.refresh();
    answers.push([job('a', 'Failed'), job('b', 'Succeeded')]);
    await model.refresh();
    expect(finished.mock.calls).toEqual([['a', 'Failed']]);
    expect(model.tracked.size).toBe(0);
  });

  it('forgets a tracked job that was deleted', async () => {
    answers.push([job('a', 'Running')], [], []);
    model.track('a');
    await model.refresh();
    await model.refresh();
    expect(model.tracked.size).toBe(0);
  });

  it('keeps tracking a job not listed yet', async () => {
    answers.push([], []);
    model.track('new');
    await model.refresh();
    expect(model.tracked.has('new')).toBe(true);
  });

  it('clamps the refresh interval', () => {
    model.refreshInterval = 0.1;
    expect(model.refreshInterval).toBe(1);
    model.refreshInterval = 1e9;
    expect(model.refreshInterval).toBe(3600);
    model.refreshInterval = 7;
    expect(model.refreshInterval).toBe(7);
  });
});
