/**
 * A typed client for the `pytorchjob/api` REST endpoints.
 *
 * @packageDocumentation
 */

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { IErrorBody, IFieldError, IServerMessage } from './tokens';

/**
 * An error answered by the `pytorchjob/api` endpoints, or a failure to reach them.
 */
export class PyTorchJobAPIError extends Error {
  /**
   * Construct an error.
   *
   * @param status - HTTP status code, or 0 when the server could not be reached.
   * @param message - A human-readable explanation.
   * @param field - The offending request field, if the server named one.
   * @param errors - Every offending field, for an invalid job body.
   * @param coded - The message's code and parameters, if the server sent them.
   */
  constructor(
    status: number,
    message: string,
    field: string | null = null,
    errors: IFieldError[] = [],
    coded: Omit<IServerMessage, 'message'> = {}
  ) {
    super(message);
    this.name = 'PyTorchJobAPIError';
    this.status = status;
    this.field = field;
    this.problem = { ...coded, message };
    this.errors =
      errors.length === 0 && field !== null
        ? [{ ...this.problem, field }]
        : errors;
  }

  /**
   * The message with its code and parameters (`translateMessage`).
   */
  readonly problem: IServerMessage;

  /**
   * HTTP status code; 0 when the server could not be reached.
   */
  readonly status: number;

  /**
   * The offending request field, or `null`.
   */
  readonly field: string | null;

  /**
   * Every offending field with its message; empty when none was named.
   */
  readonly errors: IFieldError[];
}

/**
 * Build the error for a failed answer from its status and parsed JSON body.
 *
 * @param status - The HTTP status code.
 * @param body - The parsed JSON body, or `null` if it was empty or not JSON.
 * @param statusText - The HTTP reason phrase, used when the body has no message.
 * @returns The typed error.
 */
export function errorFromBody(
  status: number,
  body: unknown,
  statusText = ''
): PyTorchJobAPIError {
  const data: IErrorBody = Private.isObject(body) ? (body as IErrorBody) : {};
  const message =
    Private.nonEmptyString(data.message) ??
    Private.nonEmptyString(data.reason) ??
    Private.nonEmptyString(statusText) ??
    `HTTP ${status}`;
  const field = Private.nonEmptyString(data.field) ?? null;
  const errors = Array.isArray(data.errors)
    ? data.errors.filter(
        (e): e is IFieldError =>
          Private.isObject(e) &&
          typeof e.field === 'string' &&
          typeof e.message === 'string'
      )
    : [];
  const coded =
    typeof data.code === 'string' && Private.isObject(data.params)
      ? { code: data.code, params: data.params }
      : {};
  return new PyTorchJobAPIError(status, message, field, errors, coded);
}

/**
 * Call an endpoint under `<baseUrl>pytorchjob/api/`.
 *
 * @param endPoint - The path below `pytorchjob/api/`, e.g. `config`.
 * @param init - The fetch options (method, body, …).
 * @param serverSettings - The server connection settings; defaults to the page's.
 * @returns The parsed JSON answer, or `null` for an empty one (204).
 * @throws {PyTorchJobAPIError} When the server cannot be reached or answers
 * an error status.
 */
export async function requestAPI<T>(
  endPoint = '',
  init: RequestInit = {},
  serverSettings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<T> {
  const url = URLExt.join(
    serverSettings.baseUrl,
    'pytorchjob',
    'api',
    endPoint
  );

  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, serverSettings);
  } catch (error) {
    throw new PyTorchJobAPIError(0, Private.describe(error));
  }

  const text = await response.text();
  let body: unknown = null;
  if (text.length > 0) {
    try {
      body = JSON.parse(text);
    } catch {
      if (response.ok) {
        throw new PyTorchJobAPIError(
          response.status,
          `Not a JSON answer: ${text.slice(0, 200)}`
        );
      }
    }
  }

  if (!response.ok) {
    throw errorFromBody(response.status, body, response.statusText);
  }
  return body as T;
}

/**
 * Module-private helpers.
 */
namespace Private {
  /**
   * Whether a value is a plain (non-array) object.
   */
  export function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  /**
   * The value if it is a non-empty string, else `undefined`.
   */
  export function nonEmptyString(value: unknown): string | undefined {
    return typeof value === 'string' && value.trim().length > 0
      ? value
      : undefined;
  }

  /**
   * A message for a thrown value of unknown type.
   */
  export function describe(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
  }
}
