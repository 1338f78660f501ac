/**
 * The log websocket: connects, feeds a `LogBuffer`, and reconnects with
 * backoff after a drop, resuming after the last offset of every replica.
 *
 * @packageDocumentation
 */

import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { ILogBatch, ILogChunk, LogMessage } from '../tokens';
import { LogBuffer } from './buffer';

/**
 * A resumable log stream.
 */
export class LogStream implements IDisposable {
  /**
   * Construct a stream; call `start()` to connect.
   */
  constructor(options: LogStream.IOptions) {
    this.buffer = options.buffer;
    this._makeUrl = options.url;
    this._WebSocket = options.WebSocket ?? WebSocket;
    this._initialDelay = options.initialDelay ?? 500;
    this._maxDelay = options.maxDelay ?? 30000;
    this._delay = this._initialDelay;
  }

  /**
   * The buffer the lines go to.
   */
  readonly buffer: LogBuffer;

  /**
   * Where the stream is.
   */
  get status(): LogStream.Status {
    return this._status;
  }

  /**
   * The error of a failed stream.
   */
  get error(): string {
    return this._error;
  }

  /**
   * Notices about replicas' logs (`worker-1: the log cannot be read …`),
   * newest last, one per replica.
   */
  get notices(): ReadonlyMap<string, string> {
    return this._notices;
  }

  /**
   * How many times the stream connected.
   */
  get connections(): number {
    return this._connections;
  }

  /**
   * Emitted when the status changes.
   */
  get statusChanged(): ISignal<this, LogStream.Status> {
    return this._statusChanged;
  }

  /**
   * Emitted when lines were added to the buffer.
   */
  get received(): ISignal<this, void> {
    return this._received;
  }

  /**
   * Whether the stream is disposed.
   */
  get isDisposed(): boolean {
    return this._disposed;
  }

  /**
   * Connect (once).
   */
  start(): void {
    if (this._socket || this._disposed) {
      return;
    }
    this._connect();
  }

  /**
   * Handle one message of the websocket (public for tests): a batch of chunks
   * as binary (`decodeBatch`), anything else as JSON text.
   */
  handleMessage(data: string | ArrayBuffer): void {
    let message: LogMessage;
    try {
      message =
        typeof data === 'string'
          ? (JSON.parse(data) as LogMessage)
          : decodeBatch(data);
    } catch {
      return;
    }
    // One `received` per message, however many chunks it batches.
    let received = false;
    for (const one of 'chunks' in message ? message.chunks : [message]) {
      received = this._handle(one) || received;
    }
    if (received) {
      this._received.emit();
    }
  }

  /**
   * Close the connection and stop reconnecting.
   */
  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
    const socket = this._socket;
    this._socket = null;
    if (socket) {
      socket.onclose = null;
      socket.onmessage = null;
      socket.onerror = null;
      socket.close();
    }
    this._setStatus('closed');
    Signal.clearData(this);
  }

  /**
   * One chunk, notice, end or error; whether it is something to show.
   */
  private _handle(message: Exclude<LogMessage, ILogBatch>): boolean {
    if ('end' in message) {
      this._ended = true;
      this._setStatus('ended');
    } else if ('error' in message) {
      this._ended = true;
      this._error = message.error;
      this._setStatus('error');
    } else if ('notice' in message && message.notice) {
      this._notices.set(message.replica, message.text);
      return true;
    } else if ('replica' in message) {
      this._delay = this._initialDelay;
      const added = this.buffer.append(message as ILogChunk);
      return added > 0 || this.buffer.replicas.length > 0;
    }
    return false;
  }

  private _connect(): void {
    const since = this._connections === 0 ? undefined : this.buffer.offsets;
    const url = this._makeUrl(since);
    this._connections++;
    this._setStatus(this._connections === 1 ? 'connecting' : 'reconnecting');
    const socket = new this._WebSocket(url);
    socket.binaryType = 'arraybuffer';
    this._socket = socket;
    socket.onopen = () => {
      if (!this._ended) {
        this._setStatus('open');
      }
    };
    socket.onmessage = (event: MessageEvent) => {
      this.handleMessage(
        event.data instanceof ArrayBuffer ? event.data : String(event.data)
      );
    };
    socket.onclose = () => {
      this._socket = null;
      if (this._disposed || this._ended) {
        return;
      }
      // A drop: resume after the offsets seen so far, with backoff.
      this._setStatus('reconnecting');
      const delay = this._delay;
      this._delay = Math.min(this._maxDelay, this._delay * 2);
      this._timer = setTimeout(() => {
        this._timer = null;
        if (!this._disposed) {
          this._connect();
        }
      }, delay);
    };
  }

  private _setStatus(status: LogStream.Status): void {
    if (status === this._status) {
      return;
    }
    this._status = status;
    if (!this._disposed || status === 'closed') {
      this._statusChanged.emit(status);
    }
  }

  private _makeUrl: (since?: Record<string, number>) => string;
  private _WebSocket: typeof WebSocket;
  private _socket: WebSocket | null = null;
  private _status: LogStream.Status = 'idle';
  private _error = '';
  private _ended = false;
  private _disposed = false;
  private _connections = 0;
  private _initialDelay: number;
  private _maxDelay: number;
  private _delay: number;
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _statusChanged = new Signal<this, LogStream.Status>(this);
  private _received = new Signal<this, void>(this);
  private _notices = new Map<string, string>();
}

const utf8 = new TextDecoder();

/**
 * A binary batch message: the length of its JSON header (4 bytes, big
 * endian), the header `{chunks: [...]}` whose chunks give their text's length
 * in UTF-8 (`bytes`) instead of the text, then the texts one after another.
 * The texts are not JSON: escaping and parsing them cost the server and the
 * browser more than everything else they do with a line.
 */
export function decodeBatch(data: ArrayBuffer): ILogBatch {
  const bytes = new Uint8Array(data);
  const size = new DataView(data).getUint32(0);
  const header = JSON.parse(utf8.decode(bytes.subarray(4, 4 + size))) as {
    chunks: Array<Record<string, unknown> & { bytes: number }>;
  };
  let at = 4 + size;
  for (const chunk of header.chunks) {
    const end = at + chunk.bytes;
    if (end > bytes.length) {
      throw new RangeError('a log batch shorter than its header says');
    }
    chunk.text = utf8.decode(bytes.subarray(at, end));
    delete (chunk as Record<string, unknown>).bytes;
    at = end;
  }
  return header as unknown as ILogBatch;
}

/**
 * A namespace for `LogStream` types.
 */
export namespace LogStream {
  /**
   * Where a stream is.
   */
  export type Status =
    | 'idle'
    | 'connecting'
    | 'open'
    | 'reconnecting'
    | 'ended'
    | 'error'
    | 'closed';

  /**
   * The options of a stream.
   */
  export interface IOptions {
    /**
     * The buffer to fill.
     */
    buffer: LogBuffer;

    /**
     * The websocket URL; `since` is given when resuming after a drop.
     */
    url: (since?: Record<string, number>) => string;

    /**
     * The WebSocket class (the server settings'); the browser's by default.
     */
    WebSocket?: typeof WebSocket;

    /**
     * The first reconnection delay, in ms (500).
     */
    initialDelay?: number;

    /**
     * The longest reconnection delay, in ms (30 000).
     */
    maxDelay?: number;
  }
}
