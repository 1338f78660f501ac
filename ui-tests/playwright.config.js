/**
 * Playwright configuration for the Galata tests.
 *
 * Uses the system Chromium (never `playwright install`) and records no video,
 * which would need Playwright's own ffmpeg. The server's port comes from
 * PTJOB_UI_PORT (default 8888), so that the tests can run beside another lab.
 */
const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

const port = process.env.PTJOB_UI_PORT || '8888';
// A second server on the kubernetes backend, against the fake API it starts.
const kubePort = process.env.PTJOB_UI_KUBE_PORT || '8899';
const fakeKubePort = process.env.PTJOB_FAKE_KUBE_PORT || '8898';
process.env.PTJOB_FAKE_KUBE_URL = `http://127.0.0.1:${fakeKubePort}`;

module.exports = {
  ...baseConfig,
  outputDir: 'test-results',
  reporter: 'list',
  retries: process.env.CI ? 1 : 0,
  workers: 1,
  timeout: 120 * 1000,
  use: {
    ...baseConfig.use,
    baseURL: `http://localhost:${port}`,
    video: 'off',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync'
      ]
    }
  },
  projects: [
    { name: 'local', testIgnore: /kubernetes\.spec\.ts/ },
    {
      name: 'kubernetes',
      testMatch: /kubernetes\.spec\.ts/,
      use: { baseURL: `http://localhost:${kubePort}` }
    }
  ],
  webServer: [
    {
      command: 'jlpm start',
      url: `http://localhost:${port}/lab`,
      timeout: 120 * 1000,
      reuseExistingServer: !process.env.CI,
      env: { ...process.env, PTJOB_UI_PORT: port }
    },
    {
      command: 'jupyter lab --config jupyter_server_kube_config.py',
      url: `http://localhost:${kubePort}/lab`,
      timeout: 120 * 1000,
      reuseExistingServer: !process.env.CI,
      env: {
        ...process.env,
        PTJOB_UI_KUBE_PORT: kubePort,
        PTJOB_FAKE_KUBE_PORT: fakeKubePort
      }
    }
  ]
};
