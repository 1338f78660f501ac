/**
 * The typed client of every `pytorchjob/api` endpoint.
 *
 * @packageDocumentation
 */

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { PyTorchJobAPIError, requestAPI } from './request';
import {
  IComparison,
  IConfig,
  IJob,
  IJobBody,
  IJobEvent,
  IJobProgressDetail,
  IJobTensorBoard,
  IRenderResult,
  IRunRecord,
  IRuntime,
  ITensorBoard,
  IVolume
} from './tokens';

/**
 * A client of the REST API, bound to one server connection.
 */
export class PyTorchJobClient {
  /**
   * Construct a client.
   *
   * @param serverSettings - The server connection settings; defaults to the page's.
   */
  constructor(serverSettings?: ServerConnection.ISettings) {
    this.serverSettings = serverSettings ?? ServerConnection.makeSettings();
  }

  /**
   * The server connection settings.
   */
  readonly serverSettings: ServerConnection.ISettings;

  /**
   * `GET config`: backend and form defaults.
   */
  getConfig(): Promise<IConfig> {
    return this._request<IConfig>('config');
  }

  /**
   * `GET jobs`: every job, newest first.
   */
  async listJobs(): Promise<IJob[]> {
    const answer = await this._request<{ jobs: IJob[] }>('jobs');
    return answer.jobs;
  }

  /**
   * `GET jobs/{name}`: a job with its manifest and the body to clone it.
   */
  getJob(name: string): Promise<IJob> {
    return this._request<IJob>(Private.jobPath(name));
  }

  /**
   * `DELETE jobs/{name}`: stop every replica and remove the job.
   */
  async deleteJob(name: string): Promise<void> {
    await this._request<null>(Private.jobPath(name), { method: 'DELETE' });
  }

  /**
   * `PATCH jobs/{name}` with `{suspend}`: suspend the job (its replicas stop,
   * the job stays) or resume it; the job as the server has it now.
   */
  setSuspended(name: string, suspend: boolean): Promise<IJob> {
    return this._request<IJob>(Private.jobPath(name), {
      method: 'PATCH',
      body: JSON.stringify({ suspend })
    });
  }

  /**
   * `GET jobs/{name}/events`: events of the job and its replicas.
   */
  async events(name: string): Promise<IJobEvent[]> {
    const answer = await this._request<{ events: IJobEvent[] }>(
      URLExt.join(Private.jobPath(name), 'events')
    );
    return answer.events;
  }

  /**
   * `GET jobs/{name}/clone`: the job body of Clone & edit (the next free
   * `<name>-N`, its log directory moved along); with `resumeFrom`, that of
   * Resume from here (`PTJOB_RESUME_FROM` set to the checkpoint's path).
   */
  async cloneBody(name: string, resumeFrom?: string): Promise<IJobBody> {
    const query = resumeFrom
      ? `?${new URLSearchParams({ resumeFrom }).toString()}`
      : '';
    const answer = await this._request<{ spec: IJobBody }>(
      URLExt.join(Private.jobPath(name), 'clone') + query
    );
    return answer.spec;
  }

  /**
   * `GET jobs/{name}/tensorboard`: the log directory TensorBoard would open for
   * the job, or why it cannot.
   */
  jobTensorBoard(name: string): Promise<IJobTensorBoard> {
    return this._request<IJobTensorBoard>(
      URLExt.join(Private.jobPath(name), 'tensorboard')
    );
  }

  /**
   * `GET jobs/{name}/progress`: the job's progress and each metric's history.
   */
  progress(name: string): Promise<IJobProgressDetail> {
    return this._request<IJobProgressDetail>(
      URLExt.join(Private.jobPath(name), 'progress')
    );
  }

  /**
   * `GET jobs/{name}/run`: the run's hyperparameters, metrics, checkpoints
   * and artifacts.
   */
  run(name: string): Promise<IRunRecord> {
    return this._request<IRunRecord>(URLExt.join(Private.jobPath(name), 'run'));
  }

  /**
   * `GET compare?job=a&job=b`: the hyperparameters that differ between jobs
   * and their latest metrics, the best of each marked.
   */
  compare(names: readonly string[]): Promise<IComparison> {
    const query = names.map(name => `job=${encodeURIComponent(name)}`);
    return this._request<IComparison>(`compare?${query.join('&')}`);
  }

  /**
   * `POST jobs`: submit a job.
   */
  submit(body: IJobBody): Promise<IJob> {
    return this._request<IJob>('jobs', {
      method: 'POST',
      body: JSON.stringify(body)
    });
  }

  /**
   * `POST render`: the manifest of a job body; creates nothing.
   */
  render(body: IJobBody): Promise<IRenderResult> {
    return this._request<IRenderResult>('render', {
      method: 'POST',
      body: JSON.stringify(body)
    });
  }

  /**
   * `POST render` with `{yaml}`: read edited YAML back into a job body.
   */
  renderYaml(yaml: string): Promise<IRenderResult> {
    return this._request<IRenderResult>('render', {
      method: 'POST',
      body: JSON.stringify({ yaml })
    });
  }

  /**
   * `GET volumes`: the claims a job can mount.
   */
  async volumes(): Promise<IVolume[]> {
    const answer = await this._request<{ volumes: IVolume[] }>('volumes');
    return answer.volumes;
  }

  /**
   * `GET runtimes`: the Kubeflow Trainer runtimes a TrainJob can run on here,
   * usable ones first (empty where TrainJobs are not served).
   */
  async runtimes(): Promise<IRuntime[]> {
    const answer = await this._request<{ runtimes: IRuntime[] }>('runtimes');
    return answer.runtimes;
  }

  /**
   * `POST tensorboards`: start (or reuse) a TensorBoard for a job, a
   * directory, or several jobs (one run per job, named after it).
   */
  startTensorBoard(
    target: { job: string } | { logdir: string } | { jobs: string[] }
  ): Promise<ITensorBoard> {
    return this._request<ITensorBoard>('tensorboards', {
      method: 'POST',
      body: JSON.stringify(target)
    });
  }

  /**
   * `GET tensorboards`: the running TensorBoards, oldest first.
   */
  listTensorBoards(): Promise<ITensorBoard[]> {
    return this._request<ITensorBoard[]>('tensorboards');
  }

  /**
   * `GET tensorboards/<id>`: whether a TensorBoard still runs (`false` on 404).
   */
  async isTensorBoardRunning(id: string): Promise<boolean> {
    try {
      await this._request<ITensorBoard>(
        URLExt.join('tensorboards', encodeURIComponent(id))
      );
      return true;
    } catch (reason) {
      if (reason instanceof PyTorchJobAPIError && reason.status === 404) {
        return false;
      }
      throw reason;
    }
  }

  /**
   * `DELETE tensorboards/<id>`: stop a TensorBoard.
   */
  async stopTensorBoard(id: string): Promise<void> {
    await this._request<void>(
      URLExt.join('tensorboards', encodeURIComponent(id)),
      { method: 'DELETE' }
    );
  }

  /**
   * The absolute URL of a TensorBoard page, with the trailing slash it needs.
   */
  tensorBoardUrl(board: ITensorBoard): string {
    const url = /^[a-z]+:\/\//i.test(board.url)
      ? board.url
      : board.url.startsWith('/')
        ? board.url
        : URLExt.join(this.serverSettings.baseUrl, board.url);
    return url.endsWith('/') ? url : url + '/';
  }

  /**
   * The websocket URL of a job's log stream, with the token when the
   * connection settings ask for it in the URL.
   *
   * @param name - The job.
   * @param query - The stream's query parameters.
   */
  logsUrl(name: string, query: PyTorchJobClient.ILogsQuery): string {
    const settings = this.serverSettings;
    const params: Record<string, string> = {};
    params.follow = query.follow ? '1' : '0';
    if (query.previous) {
      params.previous = '1';
    }
    if (query.replica) {
      params.replica = query.replica;
    }
    if (query.tail !== undefined && query.tail !== null) {
      params.tail = String(query.tail);
    }
    if (query.since && Object.keys(query.since).length > 0) {
      params.since = JSON.stringify(query.since);
    }
    if (query.timestamps) {
      params.timestamps = '1';
    }
    if (settings.appendToken && settings.token) {
      params.token = settings.token;
    }
    return (
      URLExt.join(
        settings.wsUrl,
        'pytorchjob',
        'api',
        Private.jobPath(name),
        'logs'
      ) + URLExt.objectToQueryString(params)
    );
  }

  private _request<T>(endPoint: string, init: RequestInit = {}): Promise<T> {
    return requestAPI<T>(endPoint, init, this.serverSettings);
  }
}

/**
 * A namespace for `PyTorchJobClient` types.
 */
export namespace PyTorchJobClient {
  /**
   * The query of a log stream.
   */
  export interface ILogsQuery {
    /**
     * Keep streaming until the job is finished.
     */
    follow: boolean;

    /**
     * The previous container's log instead of the current one.
     */
    previous?: boolean;

    /**
     * Only this replica.
     */
    replica?: string | null;

    /**
     * Only the last lines of each replica.
     */
    tail?: number | null;

    /**
     * Resume after these offsets, per replica.
     */
    since?: Record<string, number>;

    /**
     * Each chunk with its lines' times (`ILogChunk.times`).
     */
    timestamps?: boolean;
  }
}

/**
 * Module-private helpers.
 */
namespace Private {
  /**
   * The path of a job below `pytorchjob/api/`.
   */
  export function jobPath(name: string): string {
    return URLExt.join('jobs', encodeURIComponent(name));
  }
}
