/**
 * Tests of the log stream: reconnection with backoff, resuming without loss
 * or repetition.
 */

import { LogBuffer } from '../logs/buffer';
import { LogStream } from '../logs/stream';

/**
 * A fake WebSocket the test drives.
 */
class FakeSocket {
  static instances: FakeSocket[] = [];

  constructor(public url: string) {
    FakeSocket.instances.push(this);
  }

  onopen: (() => void) | null = null;
  onmessage: ((event: { data: string | ArrayBuffer }) => void) | null = null;
  binaryType = 'blob';
  onclose: (() => void) | null = null;
  onerror: (() => void) | null = null;
  closed = false;

  open(): void {
    this.onopen?.();
  }

  send(message: unknown): void {
    this.onmessage?.({ data: JSON.stringify(message) });
  }

  sendBinary(data: ArrayBuffer): void {
    this.onmessage?.({ data });
  }

  drop(): void {
    this.closed = true;
    this.onclose?.();
  }

  close(): void {
    this.closed = true;
  }
}

/**
 * A batch as the server frames it (api/openapi.yaml): the JSON header's
 * length in 4 bytes big endian, the header with each chunk's UTF-8 `bytes`
 * in place of its text, then the texts.
 */
function binaryBatch(chunks: Array<Record<string, unknown>>): ArrayBuffer {
  const encoder = new TextEncoder();
  const texts = chunks.map(c => encoder.encode(String(c.text)));
  const header = encoder.encode(
    JSON.stringify({
      chunks: chunks.map((c, i) => {
        const { text: _text, ...rest } = c;
        return { ...rest, bytes: texts[i].length };
      })
    })
  );
  const size = 4 + header.length + texts.reduce((n, t) => n + t.length, 0);
  const out = new Uint8Array(size);
  new DataView(out.buffer).setUint32(0, header.length);
  out.set(header, 4);
  let at = 4 + header.length;
  for (const text of texts) {
    out.set(text, at);
    at += text.length;
  }
  return out.buffer;
}

function makeStream(buffer = new LogBuffer()) {
  const urls: Array<Record<string, number> | undefined> = [];
  const stream = new LogStream({
    buffer,
    WebSocket: FakeSocket as unknown as typeof WebSocket,
    initialDelay: 100,
    maxDelay: 400,
    url: since => {
      urls.push(since);
      return `ws://x/logs?since=${JSON.stringify(since ?? {})}`;
    }
  });
  return { stream, urls, buffer };
}

describe('LogStream', () => {
  beforeEach(() => {
    FakeSocket.instances = [];
    jest.useFakeTimers();
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it('handles a batch of chunks as messages of their own, in order', () => {
    const { stream, buffer } = makeStream();
    let received = 0;
    stream.received.connect(() => received++);
    stream.start();
    const socket = FakeSocket.instances[0];
    socket.open();
    socket.send({
      chunks: [
        { replica: 'master-0', text: 'a\n', offset: 2 },
        { replica: 'worker-0', text: 'b\nc\n', offset: 4 },
        { replica: 'worker-1', text: 'gone', offset: 0, notice: true },
        { replica: 'master-0', text: 'd\n', offset: 4 }
      ]
    });
    expect(buffer.length).toBe(4);
    expect(buffer.offsets).toEqual({ 'master-0': 4, 'worker-0': 4 });
    expect(stream.notices.get('worker-1')).toBe('gone');
    expect(received).toBe(1);
  });

  it('reads a binary batch: each text its own bytes, multi-byte ones too', () => {
    const { stream, buffer } = makeStream();
    let received = 0;
    stream.received.connect(() => received++);
    stream.start();
    const socket = FakeSocket.instances[0];
    expect(socket.binaryType).toBe('arraybuffer');
    socket.open();
    socket.sendBinary(
      binaryBatch([
        { replica: 'master-0', text: 'løss 0.5 ✓\n', offset: 14 },
        { replica: 'worker-0', text: 'b\nc\n', offset: 4 },
        { replica: 'worker-1', text: 'gone', offset: 0, notice: true },
        { replica: 'master-0', text: '日本\n', offset: 21 }
      ])
    );
    expect(buffer.length).toBe(4);
    expect(buffer.offsets).toEqual({ 'master-0': 21, 'worker-0': 4 });
    expect(stream.notices.get('worker-1')).toBe('gone');
    expect(received).toBe(1);
    const lines = Array.from({ length: buffer.length }, (_, i) =>
      buffer.text(i)
    );
    expect(lines).toEqual(['løss 0.5 ✓', 'b', 'c', '日本']);
  });

  it('reads stamped chunks of a binary batch as their lines', () => {
    const { stream, buffer } = makeStream();
    stream.start();
    const socket = FakeSocket.instances[0];
    socket.open();
    const stamp = '2026-11-27T14:00:00.123456789Z';
    socket.sendBinary(
      binaryBatch([
        {
          replica: 'master-0',
          text: `${stamp} løss 0.5 ✓\n${stamp} \x1b[1m  0%|\n`,
          offset: 30,
          stamped: true
        },
        { replica: 'worker-1', text: 'pod gone away', offset: 0, notice: true },
        {
          replica: 'worker-0',
          text: `${stamp} 日本 x\n${stamp} \r\x1b[1m 50%|\n${stamp}\n${stamp} w  y\n`,
          offset: 60,
          replicas: ['master-0', 'worker-0'],
          owners: '1001',
          offsets: { 'master-0': 50, 'worker-0': 60 },
          stamped: true
        }
      ])
    );
    const lines = Array.from({ length: buffer.length }, (_, i) => [
      buffer.replicaOf(i),
      buffer.text(i)
    ]);
    expect(lines).toEqual([
      ['master-0', 'løss 0.5 ✓'],
      ['master-0', '\x1b[1m 50%|'],
      ['worker-0', '日本 x'],
      ['master-0', ''],
      ['worker-0', 'w  y']
    ]);
    expect(buffer.plainText(1)).toBe(' 50%|');
    expect(buffer.offsets).toEqual({ 'master-0': 50, 'worker-0': 60 });
    expect(stream.notices.get('worker-1')).toBe('pod gone away');
  });

  it('ignores a binary batch shorter than its header says', () => {
    const { stream, buffer } = makeStream();
    stream.start();
    const socket = FakeSocket.instances[0];
    socket.open();
    const whole = binaryBatch([
      { replica: 'master-0', text: 'a\nb\n', offset: 4 }
    ]);
    socket.sendBinary(whole.slice(0, whole.byteLength - 1));
    expect(buffer.length).toBe(0);
    expect(stream.status).toBe('open');
  });

  it('connects once and feeds the buffer', () => {
    const { stream, urls, buffer } = makeStream();
    const statuses: string[] = [];
    stream.statusChanged.connect((_, s) => statuses.push(s));
    stream.start();
    stream.start();
    expect(FakeSocket.instances).toHaveLength(1);
    expect(urls).toEqual([undefined]);
    const socket = FakeSocket.instances[0];
    socket.open();
    socket.send({ replica: 'master-0', text: 'a\nb\n', offset: 4 });
    expect(buffer.length).toBe(2);
    socket.send({ end: true });
    socket.drop();
    jest.advanceTimersByTime(10_000);
    expect(FakeSocket.instances).toHaveLength(1);
    expect(statuses).toEqual(['connecting', 'open', 'ended']);
    stream.dispose();
  });

  it('resumes after a drop from the last offsets, so no line is lost or repeated', () => {
    const { stream, urls, buffer } = makeStream();
    stream.start();
    const first = FakeSocket.instances[0];
    first.open();
    first.send({ replica: 'master-0', text: 'm1\nm2\n', offset: 6 });
    first.send({ replica: 'worker-0', text: 'w1\n', offset: 3 });
    first.drop();
    expect(stream.status).toBe('reconnecting');
    jest.advanceTimersByTime(99);
    expect(FakeSocket.instances).toHaveLength(1);
    jest.advanceTimersByTime(1);
    expect(FakeSocket.instances).toHaveLength(2);
    expect(urls[1]).toEqual({ 'master-0': 6, 'worker-0': 3 });

    // The server resumes after those offsets.
    const second = FakeSocket.instances[1];
    second.open();
    second.send({ replica: 'master-0', text: 'm3\n', offset: 9 });
    second.send({ replica: 'worker-0', text: 'w2\n', offset: 6 });
    second.send({ end: true });
    expect(buffer.toText(buffer.view(null), true)).toBe(
      'master-0 | m1\nmaster-0 | m2\nworker-0 | w1\nmaster-0 | m3\nworker-0 | w2\n'
    );
    stream.dispose();
  });

  it('backs off after repeated drops, and resets after a message', () => {
    const { stream } = makeStream();
    stream.start();
    FakeSocket.instances[0].drop();
    jest.advanceTimersByTime(100);
    expect(FakeSocket.instances).toHaveLength(2);
    FakeSocket.instances[1].drop();
    jest.advanceTimersByTime(199);
    expect(FakeSocket.instances).toHaveLength(2);
    jest.advanceTimersByTime(1);
    expect(FakeSocket.instances).toHaveLength(3);
    FakeSocket.instances[2].drop();
    jest.advanceTimersByTime(400);
    expect(FakeSocket.instances).toHaveLength(4);
    FakeSocket.instances[3].drop();
    // Capped at maxDelay.
    jest.advanceTimersByTime(400);
    expect(FakeSocket.instances).toHaveLength(5);
    // A message resets the delay.
    FakeSocket.instances[4].send({
      replica: 'master-0',
      text: 'x\n',
      offset: 2
    });
    FakeSocket.instances[4].drop();
    jest.advanceTimersByTime(100);
    expect(FakeSocket.instances).toHaveLength(6);
    stream.dispose();
  });

  it('stops on an error message', () => {
    const { stream } = makeStream();
    stream.start();
    const socket = FakeSocket.instances[0];
    socket.send({ error: "job 'x' not found", status: 404 });
    socket.drop();
    jest.advanceTimersByTime(10_000);
    expect(FakeSocket.instances).toHaveLength(1);
    expect(stream.status).toBe('error');
    expect(stream.error).toBe("job 'x' not found");
    stream.dispose();
  });

  it('closes the socket and stops reconnecting when disposed', () => {
    const { stream } = makeStream();
    stream.start();
    const socket = FakeSocket.instances[0];
    stream.dispose();
    expect(socket.closed).toBe(true);
    expect(stream.status).toBe('closed');
    jest.advanceTimersByTime(10_000);
    expect(FakeSocket.instances).toHaveLength(1);
  });

  it('keeps notices apart from the log lines', () => {
    const { stream, buffer } = makeStream();
    stream.start();
    const socket = FakeSocket.instances[0];
    socket.send({
      replica: 'master-0',
      text: 'a\n',
      offset: 1,
      previous: false
    });
    socket.send({
      replica: 'worker-0',
      text: 'the log of pod x-worker-0 cannot be read',
      offset: 0,
      previous: false,
      notice: true
    });
    expect(buffer.length).toBe(1);
    expect([...stream.notices]).toEqual([
      ['worker-0', 'the log of pod x-worker-0 cannot be read']
    ]);
    expect(stream.error).toBe('');
    stream.dispose();
  });

  it('ignores frames that are not JSON', () => {
    const { stream, buffer } = makeStream();
    stream.start();
    stream.handleMessage('not json');
    expect(buffer.length).toBe(0);
    stream.dispose();
  });
});
