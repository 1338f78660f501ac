import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

/**
 * Progress and metrics on the local backend, for each way a job can tell how
 * far it is: the reporter (Kubeflow's protocol), a tqdm bar in its log only,
 * TensorBoard scalars only. The panel's bar moves while the job runs, the
 * metrics show in the panel and the job view; two finished jobs compare in a
 * tab (a screenshot, attached).
 */
const SUFFIX = Date.now().toString(36);
const STEPS = ['--steps', '200', '--delay', '0.15'];
const JOBS = {
  report: {
    name: `ui-report-${SUFFIX}`,
    command: ['python', 'progress_report.py', ...STEPS]
  },
  tqdm: {
    name: `ui-tqdm-${SUFFIX}`,
    command: ['python', 'progress_tqdm.py', ...STEPS]
  },
  tensorboard: {
    name: `ui-board-${SUFFIX}`,
    command: ['python', 'progress_tensorboard.py', ...STEPS],
    logdir: `/mnt/logs/board-${SUFFIX}`,
    pvc: [{ claim: 'logs', mountPath: '/mnt/logs' }]
  }
};

async function openPanel(page: IJupyterLabPageFixture): Promise<Locator> {
  await page.getByRole('tab', { name: 'PyTorch Jobs' }).click();
  const panel = page.getByRole('region', { name: 'PyTorch Jobs' });
  await expect(panel).toBeVisible();
  return panel;
}

/**
 * The percent a row's bar shows now; null while there is no determinate bar.
 */
async function percentOf(row: Locator): Promise<number | null> {
  const bar = row.getByRole('progressbar');
  if ((await bar.count()) === 0) {
    return null;
  }
  const value = await bar.getAttribute('aria-valuenow');
  return value === null ? null : Number(value);
}

test.describe.serial('progress and metrics of running jobs', () => {
  test.beforeAll(async ({ request }) => {
    for (const body of Object.values(JOBS)) {
      const response = await request.post('pytorchjob/api/jobs', {
        data: { shm: 'off', ...body }
      });
      expect(response.status(), await response.text()).toBe(201);
    }
  });

  test.afterAll(async ({ request }) => {
    for (const { name } of Object.values(JOBS)) {
      await request.delete(`pytorchjob/api/jobs/${name}`);
    }
  });

  for (const path of ['report', 'tqdm'] as const) {
    test(`the bar moves while the job runs (${path})`, async ({ page }) => {
      const panel = await openPanel(page);
      const row = panel.locator(`[data-job="${JOBS[path].name}"]`);
      await expect(row).toBeVisible();
      let first: number | null = null;
      await expect
        .poll(
          async () => {
            first = await percentOf(row);
            return first !== null && first < 100;
          },
          { timeout: 60000 }
        )
        .toBe(true);
      // A later poll shows more done, with an ETA and the loss beside it.
      await expect
        .poll(async () => (await percentOf(row)) ?? 0, { timeout: 60000 })
        .toBeGreaterThan(first!);
      await expect(row.locator('.jp-PyTorchJobPanel-metric')).toContainText(
        /^loss /
      );
    });
  }

  test('TensorBoard scalars show in the panel and the job view (tensorboard)', async ({
    page
  }) => {
    const name = JOBS.tensorboard.name;
    const panel = await openPanel(page);
    const row = panel.locator(`[data-job="${name}"]`);
    await expect(row.locator('.jp-PyTorchJobPanel-metric')).toContainText(
      /^loss /,
      { timeout: 60000 }
    );
    await row.locator('.jp-PyTorchJobPanel-name').click();
    const section = page.locator('.jp-PyTorchJobView-progress');
    await expect(section).toContainText('TensorBoard event files');
    // The step moves while the view is shown (its own polling).
    const stepText = section.locator('dd', { hasText: /^step \d+/ });
    await expect(stepText).toBeVisible({ timeout: 30000 });
    const before = await stepText.textContent();
    await expect
      .poll(async () => stepText.textContent(), { timeout: 60000 })
      .not.toBe(before);
    await expect(
      section.locator('[data-metric="loss"] polyline')
    ).toBeVisible();
    await expect(section.locator('[data-metric="lr"]')).toBeVisible();
  });

  test('finished jobs keep their final metrics and compare in a tab', async ({
    page
  }, testInfo) => {
    test.setTimeout(180000);
    const panel = await openPanel(page);
    for (const { name } of Object.values(JOBS)) {
      await expect(panel.locator(`[data-job="${name}"]`)).toHaveAttribute(
        'data-state',
        'Succeeded',
        { timeout: 120000 }
      );
    }
    const report = panel.locator(`[data-job="${JOBS.report.name}"]`);
    await expect(report.getByRole('progressbar')).toHaveCount(0);
    await expect(report.locator('.jp-PyTorchJobPanel-metric')).toContainText(
      /^loss /
    );

    for (const path of ['report', 'tqdm'] as const) {
      await panel.getByLabel(`Select ${JOBS[path].name}`).check();
    }
    await panel.getByRole('button', { name: 'Compare (2)' }).click();
    const table = page.locator('.jp-PyTorchJobCompare-table');
    await expect(table).toBeVisible();
    await expect(table.locator('[data-parameter="command"]')).toContainText(
      'progress_tqdm.py'
    );
    await expect(
      table.locator('[data-metric="loss"] td.jp-mod-best')
    ).toHaveCount(1);
    const shot = await page
      .locator('.jp-PyTorchJobCompare')
      .screenshot({ path: testInfo.outputPath('comparison.png') });
    await testInfo.attach('comparison', {
      body: shot,
      contentType: 'image/png'
    });
    // Not a pixel assertion: the screenshot is for people to look at.
  });
});
