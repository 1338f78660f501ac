/**
 * Tests of the side panel's state and text.
 */

import { nullTranslator } from '@jupyterlab/translation';

import { formatError, formatStatus, JobsPanel } from '../panel';
import { PyTorchJobAPIError } from '../request';
import { IConfig } from '../tokens';

const trans = nullTranslator.load('jupyter_pytorchjob');

const config: IConfig = {
  version: '0.1.0',
  backend: 'local',
  defaults: {
    image: 'pytorch/pytorch:latest',
    gpuResource: 'nvidia.com/gpu',
    shm: '2Gi'
  }
};

describe('formatStatus', () => {
  it('shows the backend first, then the version and the default image', () => {
    expect(formatStatus(config, trans)).toEqual([
      'Backend: local',
      'Version: 0.1.0',
      'Default image: pytorch/pytorch:latest'
    ]);
  });

  it('leaves out an empty default image', () => {
    const kubernetes = {
      ...config,
      backend: 'kubernetes',
      defaults: { ...config.defaults, image: '' }
    };
    expect(formatStatus(kubernetes, trans)).toEqual([
      'Backend: kubernetes',
      'Version: 0.1.0'
    ]);
  });
});

describe('formatError', () => {
  it('says when the server cannot be reached', () => {
    const error = new PyTorchJobAPIError(0, 'Failed to fetch');
    expect(formatError(error, trans)).toBe(
      'Cannot reach the Jupyter server: Failed to fetch'
    );
  });

  it('explains a 404 as a disabled server extension', () => {
    const error = new PyTorchJobAPIError(404, 'Not Found');
    expect(formatError(error, trans)).toMatch(
      /server extension is not enabled/
    );
  });

  it('shows the status and message of other errors', () => {
    const error = new PyTorchJobAPIError(500, 'boom');
    expect(formatError(error, trans)).toBe('Server error (HTTP 500): boom');
  });
});

describe('JobsPanel', () => {
  it('is a labelled region with the panel id', () => {
    const panel = new JobsPanel({ fetchConfig: () => Promise.resolve(config) });
    expect(panel.id).toBe('jp-pytorchjob-panel');
    expect(panel.node.getAttribute('role')).toBe('region');
    expect(panel.node.getAttribute('aria-label')).toBe('PyTorch Jobs');
    expect(panel.title.caption).toBe('PyTorch Jobs');
    panel.dispose();
  });

  it('starts loading and holds the configuration after refresh()', async () => {
    const fetchConfig = jest.fn(() => Promise.resolve(config));
    const panel = new JobsPanel({ fetchConfig });
    expect(panel.state).toEqual({ kind: 'loading' });
    await panel.refresh();
    expect(fetchConfig).toHaveBeenCalledTimes(1);
    expect(panel.state).toEqual({ kind: 'ready', config });
    panel.dispose();
  });

  it('keeps a typed API error', async () => {
    const error = new PyTorchJobAPIError(403, 'Forbidden');
    const panel = new JobsPanel({ fetchConfig: () => Promise.reject(error) });
    await panel.refresh();
    expect(panel.state).toEqual({ kind: 'error', error });
    panel.dispose();
  });

  it('wraps any other failure as a network error', async () => {
    const panel = new JobsPanel({
      fetchConfig: () => Promise.reject(new Error('offline'))
    });
    await panel.refresh();
    const state = panel.state;
    expect(state.kind).toBe('error');
    if (state.kind === 'error') {
      expect(state.error).toBeInstanceOf(PyTorchJobAPIError);
      expect(state.error.status).toBe(0);
      expect(state.error.message).toBe('offline');
    }
    panel.dispose();
  });

  it('starts with the schema defaults and applies new settings', () => {
    const panel = new JobsPanel({ fetchConfig: () => Promise.resolve(config) });
    expect(panel.settings).toEqual({
      refreshInterval: 5,
      notifications: true,
      defaultShm: '2Gi'
    });
    panel.setSettings({
      refreshInterval: 30,
      notifications: false,
      defaultShm: ''
    });
    expect(panel.settings.refreshInterval).toBe(30);
    expect(panel.settings.defaultShm).toBe('');
    panel.dispose();
  });
});
