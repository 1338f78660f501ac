import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import { CHINESE, useDarkTheme } from './lab';

/**
 * The job view (#32): a job writing to a host path outside the TensorBoard
 * roots has its TensorBoard button disabled with the reason in the view;
 * suspending asks first and the view follows; the Spec section and the
 * metric charts of a finished job (a loss spanning decades, on a log scale).
 * Compared with snapshots in light, dark and Chinese.
 */
const HOST = 'ui-view-host';
const BOARD = 'ui-view-board';
const JOBS = [
  {
    name: HOST,
    command: ['python', '-c', 'import time; time.sleep(600)'],
    logdir: '/mnt/logs/host'
  },
  {
    name: BOARD,
    command: [
      'python',
      'progress_tensorboard.py',
      '--steps',
      '60',
      '--delay',
      '0.02'
    ],
    pvc: [{ claim: 'logs', mountPath: '/mnt/logs' }],
    logdir: `/mnt/logs/${BOARD}`
  }
];

const WORDS = {
  en: { panel: 'PyTorch Jobs', suspended: 'Suspended', running: 'Running' },
  zh_CN: { panel: 'PyTorch 作业', suspended: '已暂停', running: '运行中' }
};

async function openJob(
  page: IJupyterLabPageFixture,
  panelName: string,
  name: string
): Promise<void> {
  await page.getByRole('tab', { name: panelName }).click();
  const panel = page.getByRole('region', { name: panelName });
  await panel.locator(`[data-job="${name}"] .jp-PyTorchJobPanel-name`).click();
}

test.describe.serial('the job view', () => {
  test.use({ viewport: { width: 1400, height: 900 } });

  test.beforeAll(async ({ request }) => {
    for (const body of JOBS) {
      await request.delete(`pytorchjob/api/jobs/${body.name}`);
      const response = await request.post('pytorchjob/api/jobs', {
        data: { shm: 'off', ...body }
      });
      expect(response.status(), await response.text()).toBe(201);
    }
  });

  test.afterAll(async ({ request }) => {
    for (const { name } of JOBS) {
      await request.delete(`pytorchjob/api/jobs/${name}`);
    }
  });

  test('disables TensorBoard with the reason, suspends after asking', async ({
    page
  }, testInfo) => {
    await openJob(page, WORDS.en.panel, HOST);
    const view = page.locator('.jp-PyTorchJobView');
    const header = view.locator('.jp-PyTorchJobView-header');
    await expect(header.getByRole('status')).toHaveText('Running', {
      timeout: 60000
    });
    await expect(
      header.getByRole('button', { name: 'TensorBoard', exact: true })
    ).toBeDisabled();
    await expect(view.getByRole('note')).toContainText(
      'TensorBoard cannot open it:'
    );
    await expect(view.getByRole('note')).toContainText(
      'outside the TensorBoard roots'
    );
    await expect(header).toHaveScreenshot('view-running-light.png');
    await page.screenshot({ path: testInfo.outputPath('running.png') });

    await header.getByRole('button', { name: 'Suspend' }).click();
    const dialog = page.locator('.jp-Dialog');
    await expect(dialog).toContainText('Resuming starts them again');
    await dialog.getByRole('button', { name: 'Suspend' }).click();
    await expect(header.getByRole('status')).toHaveText('Suspended', {
      timeout: 60000
    });
    await expect(header.getByRole('button', { name: 'Resume' })).toBeVisible();
    await expect(header).toHaveScreenshot('view-suspended-light.png');
    await page.screenshot({ path: testInfo.outputPath('suspended.png') });
  });

  test('reads in the dark theme', async ({ page }, testInfo) => {
    await useDarkTheme(page);
    await openJob(page, WORDS.en.panel, HOST);
    const header = page.locator('.jp-PyTorchJobView-header');
    await expect(header.getByRole('status')).toHaveText('Suspended');
    await expect(header).toHaveScreenshot('view-suspended-dark.png');
    await page.screenshot({ path: testInfo.outputPath('suspended-dark.png') });
  });

  test('shows the Spec and the charts of a finished job', async ({
    page
  }, testInfo) => {
    await openJob(page, WORDS.en.panel, BOARD);
    const view = page.locator('.jp-PyTorchJobView');
    await expect(view.getByRole('status').first()).toHaveText('Succeeded', {
      timeout: 90000
    });
    await view.locator('summary', { hasText: 'Spec' }).click();
    const spec = view.locator('.jp-PyTorchJobView-spec');
    await expect(spec).toContainText('python progress_tensorboard.py');
    await expect(spec).toContainText('logs:/mnt/logs');
    const chart = view.locator('[data-metric="loss"]');
    await expect(chart).toContainText('log scale');
    await chart.locator('svg').hover();
    await expect(chart.locator('.jp-PyTorchJob-sparklineValue')).toContainText(
      'step'
    );
    await expect(spec).toHaveScreenshot('view-spec-light.png');
    await page.screenshot({ path: testInfo.outputPath('finished.png') });
  });

  test.describe('in Chinese', () => {
    test.use(CHINESE);

    test('the suspended job speaks Chinese', async ({ page }, testInfo) => {
      await openJob(page, WORDS.zh_CN.panel, HOST);
      const header = page.locator('.jp-PyTorchJobView-header');
      await expect(header.getByRole('status')).toHaveText(
        WORDS.zh_CN.suspended
      );
      await expect(header).toHaveScreenshot('view-suspended-zh_CN.png');
      // The server's own words, translated by their codes: why it waits, and
      // why TensorBoard cannot open its log directory.
      const view = page.locator('.jp-PyTorchJobView');
      await expect(
        view.locator('.jp-PyTorchJobView-waiting p').first()
      ).toHaveText('等待中：作业已挂起：恢复后才会创建它的 pod');
      await expect(view.locator('[role="note"]').first()).toContainText(
        '位于 TensorBoard 根目录'
      );
      await page.screenshot({
        path: testInfo.outputPath('suspended-zh_CN.png')
      });
    });
  });
});
