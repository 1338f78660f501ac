/**
 * Tests of the REST client's error handling.
 */

import { ServerConnection } from '@jupyterlab/services';

import { errorFromBody, PyTorchJobAPIError, requestAPI } from '../request';

describe('errorFromBody', () => {
  it('keeps the field and message of a validation error', () => {
    const error = errorFromBody(400, {
      field: 'workers',
      message: 'workers must be between 0 and 64'
    });
    expect(error).toBeInstanceOf(PyTorchJobAPIError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('PyTorchJobAPIError');
    expect(error.status).toBe(400);
    expect(error.field).toBe('workers');
    expect(error.message).toBe('workers must be between 0 and 64');
  });

  it('has no field when the body names none', () => {
    const error = errorFromBody(500, { message: 'boom', reason: null });
    expect(error.field).toBeNull();
    expect(error.message).toBe('boom');
  });

  it('treats an empty field as no field', () => {
    expect(errorFromBody(400, { field: '', message: 'bad' }).field).toBeNull();
  });

  it("falls back to Jupyter server's reason", () => {
    const error = errorFromBody(403, { message: '', reason: 'Forbidden' });
    expect(error.message).toBe('Forbidden');
  });

  it('falls back to the status text, then the status code', () => {
    expect(errorFromBody(502, null, 'Bad Gateway').message).toBe('Bad Gateway');
    expect(errorFromBody(502, null).message).toBe('HTTP 502');
  });

  it.each([['a string'], [['a', 'list']], [42], [undefined]])(
    'ignores a body that is not an object: %p',
    body => {
      const error = errorFromBody(500, body);
      expect(error.message).toBe('HTTP 500');
      expect(error.field).toBeNull();
    }
  );

  it('ignores fields of the wrong type', () => {
    const error = errorFromBody(400, { field: 3, message: { text: 'x' } });
    expect(error.field).toBeNull();
    expect(error.message).toBe('HTTP 400');
  });
});

describe('requestAPI', () => {
  /**
   * Server settings whose fetch answers `response` and records the URL.
   */
  function settingsAnswering(
    response: () => Promise<Response>,
    urls: string[]
  ): ServerConnection.ISettings {
    const fetch = jest.fn((input: RequestInfo | URL) => {
      urls.push(input instanceof Request ? input.url : String(input));
      return response();
    });
    return ServerConnection.makeSettings({
      baseUrl: 'http://localhost:8888/a%40b/',
      fetch: fetch as unknown as typeof window.fetch
    });
  }

  /**
   * A fake fetch answer.
   */
  function fakeResponse(
    status: number,
    body: string,
    statusText = ''
  ): Response {
    return {
      ok: status >= 200 && status < 300,
      status,
      statusText,
      text: () => Promise.resolve(body)
    } as Response;
  }

  it('joins the endpoint under <baseUrl>pytorchjob/api/ and parses JSON', async () => {
    const urls: string[] = [];
    const settings = settingsAnswering(
      () => Promise.resolve(fakeResponse(200, '{"backend": "local"}')),
      urls
    );
    const data = await requestAPI<{ backend: string }>('config', {}, settings);
    expect(data).toEqual({ backend: 'local' });
    expect(urls).toHaveLength(1);
    expect(urls[0]).toMatch(
      /^http:\/\/localhost:8888\/a%40b\/pytorchjob\/api\/config/
    );
  });

  it('answers null for an empty body (204)', async () => {
    const settings = settingsAnswering(
      () => Promise.resolve(fakeResponse(204, '')),
      []
    );
    await expect(requestAPI('jobs/x', {}, settings)).resolves.toBeNull();
  });

  it('throws a typed error carrying the JSON body', async () => {
    const settings = settingsAnswering(
      () =>
        Promise.resolve(
          fakeResponse(400, '{"field": "image", "message": "image is empty"}')
        ),
      []
    );
    await expect(requestAPI('render', {}, settings)).rejects.toMatchObject({
      name: 'PyTorchJobAPIError',
      status: 400,
      field: 'image',
      message: 'image is empty'
    });
  });

  it('uses the status text when the error body is not JSON', async () => {
    const settings = settingsAnswering(
      () =>
        Promise.resolve(
          fakeResponse(502, '<html>proxy error</html>', 'Bad Gateway')
        ),
      []
    );
    await expect(requestAPI('config', {}, settings)).rejects.toMatchObject({
      status: 502,
      field: null,
      message: 'Bad Gateway'
    });
  });

  it('rejects a successful answer that is not JSON', async () => {
    const settings = settingsAnswering(
      () => Promise.resolve(fakeResponse(200, '<html>login</html>')),
      []
    );
    await expect(requestAPI('config', {}, settings)).rejects.toMatchObject({
      status: 200,
      message: expect.stringContaining('Not a JSON answer')
    });
  });

  it('reports a network failure with status 0', async () => {
    const settings = settingsAnswering(
      () => Promise.reject(new TypeError('Failed to fetch')),
      []
    );
    await expect(requestAPI('config', {}, settings)).rejects.toMatchObject({
      status: 0,
      field: null
    });
  });
});
