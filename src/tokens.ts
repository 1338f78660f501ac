/**
 * Wire types of the `pytorchjob/api` REST endpoints.
 *
 * @packageDocumentation
 */

/**
 * The job defaults the server applies when a field is left empty.
 */
export interface IJobDefaults {
  /**
   * Container image of a new job.
   */
  image: string;

  /**
   * Extended resource name used for GPUs, e.g. `nvidia.com/gpu`.
   */
  gpuResource: string;

  /**
   * Size of `/dev/shm` in every replica, as a Kubernetes quantity (`2Gi`);
   * the empty string turns it off.
   */
  shm: string;
}

/**
 * The answer of `GET pytorchjob/api/config`.
 */
export interface IConfig {
  /**
   * Version of the Python package serving the API.
   */
  version: string;

  /**
   * Where jobs run: `local` (processes on the server) or `kubernetes`.
   */
  backend: string;

  /**
   * Defaults for new jobs.
   */
  defaults: IJobDefaults;
}

/**
 * The JSON body of an error answer.
 *
 * Handlers answer `{field, message}` for invalid input, and Jupyter server's
 * `APIHandler` answers `{message, reason}` for other errors.
 */
export interface IErrorBody {
  /**
   * The offending field of the request, if any.
   */
  field?: string | null;

  /**
   * A human-readable explanation.
   */
  message?: string;

  /**
   * The HTTP reason phrase, if the server sent one.
   */
  reason?: string | null;
}
