import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import { CHINESE, useDarkTheme } from './lab';

/**
 * A local job that raises (#26): its exception shows in the panel row and at
 * the top of the job view without any click beyond opening the job, and
 * *Open log at this run* shows the traceback (the run that failed is a
 * previous container: the replica was restarted in place). The Failure
 * section is compared with its snapshot in the light and dark themes and in
 * Chinese (`jlpm test:update` writes them; look at the PNGs when they change).
 */
const JOB = `ui-fail-${Date.now().toString(36)}`;
const SCRIPT = [
  'for step in range(3):',
  '    print(f"step {step}", flush=True)',
  'print(1 / 0)'
].join('\n');
const SUMMARY = 'master-0 exited 1: ZeroDivisionError: division by zero';

async function openJob(
  page: IJupyterLabPageFixture,
  panelName: string
): Promise<void> {
  await page.getByRole('tab', { name: panelName }).click();
  const panel = page.getByRole('region', { name: panelName });
  const row = panel.locator(`[data-job="${JOB}"]`);
  await expect(row).toHaveAttribute('data-state', 'Failed', {
    timeout: 90 * 1000
  });
  await row.locator('.jp-PyTorchJobPanel-name').click();
}

test.describe.serial('a job that raises', () => {
  test.beforeAll(async ({ request }) => {
    const response = await request.post('pytorchjob/api/jobs', {
      // Failed at the first exit: no back-off between restarts to wait for.
      data: {
        name: JOB,
        command: ['python', '-c', SCRIPT],
        shm: 'off',
        backoffLimit: 0
      }
    });
    expect(response.status(), await response.text()).toBe(201);
  });

  test.afterAll(async ({ request }) => {
    await request.delete(`pytorchjob/api/jobs/${JOB}`);
  });

  test('its row and its view say why, its failing run has the traceback', async ({
    page
  }, testInfo) => {
    await page.getByRole('tab', { name: 'PyTorch Jobs' }).click();
    const panel = page.getByRole('region', { name: 'PyTorch Jobs' });
    const row = panel.locator(`[data-job="${JOB}"]`);
    await expect(row).toHaveAttribute('data-state', 'Failed', {
      timeout: 90 * 1000
    });
    await expect(row.locator('.jp-PyTorchJobPanel-reason')).toHaveText(SUMMARY);

    // Opening the job is the only click: the Failure section is on top.
    await row.locator('.jp-PyTorchJobPanel-name').click();
    const view = page.locator('.jp-PyTorchJobView');
    const section = view.getByRole('region', { name: 'Failure' });
    await expect(
      section.locator('.jp-PyTorchJobView-failureSummary')
    ).toHaveText(SUMMARY);
    const tail = section.locator('.jp-PyTorchJobView-tail');
    await expect(tail).toContainText('Traceback (most recent call last):');
    await expect(tail).toContainText('ZeroDivisionError: division by zero');
    await expect(view.locator('[data-replica="master-0"]')).not.toContainText(
      'CleanPodPolicy'
    );
    await expect(section).toHaveScreenshot('failure-light.png');
    await page.screenshot({ path: testInfo.outputPath('failed-job.png') });

    await section.getByRole('button', { name: 'Open log at this run' }).click();
    const logs = page.locator('.jp-PyTorchJobLogs');
    await expect(logs.getByRole('note')).toHaveText(
      'Showing the run that failed: the previous container of master-0.'
    );
    await expect(
      logs.getByRole('checkbox', { name: 'Previous container' })
    ).toBeChecked();
    const lines = logs.getByRole('log');
    await expect(lines).toContainText('Traceback (most recent call last):');
    await expect(lines).toContainText('ZeroDivisionError: division by zero');
    await expect(logs.getByRole('status')).toContainText('End of log');
    await page.screenshot({ path: testInfo.outputPath('failing-run-log.png') });
  });

  test('its Failure section reads in the dark theme', async ({ page }) => {
    await useDarkTheme(page);
    await openJob(page, 'PyTorch Jobs');
    const section = page.getByRole('region', { name: 'Failure' });
    await expect(section).toContainText(SUMMARY);
    await expect(section).toHaveScreenshot('failure-dark.png');
  });

  test.describe('in Chinese', () => {
    test.use(CHINESE);

    test('its Failure section speaks Chinese', async ({ page }) => {
      await openJob(page, 'PyTorch 作业');
      const section = page.getByRole('region', { name: '失败原因' });
      await expect(section).toContainText(
        'master-0 退出，退出码 1：ZeroDivisionError: division by zero'
      );
      await expect(
        section.getByRole('button', { name: '打开这次运行的日志' })
      ).toBeVisible();
      await expect(section).toHaveScreenshot('failure-zh_CN.png');
    });
  });
});
