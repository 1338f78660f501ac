/**
 * Tests of the REST client's URLs.
 */

import { ServerConnection } from '@jupyterlab/services';

import { PyTorchJobClient } from '../api';

describe('PyTorchJobClient', () => {
  const settings = ServerConnection.makeSettings({
    baseUrl: 'http://localhost:8888/a%40b/',
    wsUrl: 'ws://localhost:8888/a%40b/',
    token: 'secret',
    appendToken: true
  });
  const client = new PyTorchJobClient(settings);

  it('builds the log websocket URL under the base URL, with the token', () => {
    const url = new URL(
      client.logsUrl('my-job', {
        follow: true,
        since: { 'master-0': 10, 'worker-0': 3 }
      })
    );
    expect(url.protocol).toBe('ws:');
    expect(url.pathname).toBe('/a%40b/pytorchjob/api/jobs/my-job/logs');
    expect(url.searchParams.get('follow')).toBe('1');
    expect(JSON.parse(url.searchParams.get('since')!)).toEqual({
      'master-0': 10,
      'worker-0': 3
    });
    expect(url.searchParams.get('token')).toBe('secret');
    expect(url.searchParams.has('previous')).toBe(false);
    expect(url.searchParams.has('timestamps')).toBe(false);
    expect(
      new URL(
        client.logsUrl('j', { follow: true, timestamps: true })
      ).searchParams.get('timestamps')
    ).toBe('1');
  });

  it('asks for the previous containers and one replica', () => {
    const url = new URL(
      client.logsUrl('j', {
        follow: false,
        previous: true,
        replica: 'worker-1',
        tail: 100,
        since: {}
      })
    );
    expect(url.searchParams.get('follow')).toBe('0');
    expect(url.searchParams.get('previous')).toBe('1');
    expect(url.searchParams.get('replica')).toBe('worker-1');
    expect(url.searchParams.get('tail')).toBe('100');
    expect(url.searchParams.has('since')).toBe(false);
  });

  it('leaves the token out when the settings do not append it', () => {
    const plain = new PyTorchJobClient(
      ServerConnection.makeSettings({
        baseUrl: 'http://h/',
        wsUrl: 'ws://h/',
        token: 'secret',
        appendToken: false
      })
    );
    expect(plain.logsUrl('j', { follow: true })).not.toContain('token');
  });

  it('opens TensorBoard under the base URL with a trailing slash', () => {
    const board = {
      id: 'abc',
      logdir: '/x',
      url: 'pytorchjob/tensorboard/abc'
    };
    expect(client.tensorBoardUrl(board)).toBe(
      'http://localhost:8888/a%40b/pytorchjob/tensorboard/abc/'
    );
    expect(
      client.tensorBoardUrl({
        ...board,
        url: '/a%40b/pytorchjob/tensorboard/abc/'
      })
    ).toBe('/a%40b/pytorchjob/tensorboard/abc/');
  });

  it('suspends and resumes with PATCH jobs/{name} and answers the job', async () => {
    const sent: Array<[string, string, string]> = [];
    const fetch = jest.fn(
      async (input: RequestInfo | URL, init?: RequestInit) => {
        const request = input instanceof Request ? input : null;
        sent.push([
          // Without the cache-busting query ServerConnection adds to a request.
          (request ? request.url : String(input)).split('?')[0],
          request ? request.method : (init?.method ?? 'GET'),
          request ? await request.text() : String(init?.body)
        ]);
        return {
          ok: true,
          status: 200,
          statusText: 'OK',
          text: () =>
            Promise.resolve('{"name": "my job", "state": "Suspended"}')
        } as Response;
      }
    );
    const patching = new PyTorchJobClient(
      ServerConnection.makeSettings({
        baseUrl: 'http://localhost:8888/a%40b/',
        fetch: fetch as unknown as typeof window.fetch
      })
    );
    const job = await patching.setSuspended('my job', true);
    await patching.setSuspended('my job', false);
    expect(job.state).toBe('Suspended');
    expect(sent).toEqual([
      [
        'http://localhost:8888/a%40b/pytorchjob/api/jobs/my%20job',
        'PATCH',
        '{"suspend":true}'
      ],
      [
        'http://localhost:8888/a%40b/pytorchjob/api/jobs/my%20job',
        'PATCH',
        '{"suspend":false}'
      ]
    ]);
  });
});
