import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import { useDarkTheme } from './lab';

/**
 * The job view's Run section (issue 33): a job that reports its
 * hyperparameters, two checkpoints and an artifact shows them; *Resume from
 * here* opens the form of a copy whose processes find the checkpoint in
 * PTJOB_RESUME_FROM, and that copy, submitted, says so in its own Run
 * section. Screenshots of the section in light and dark (the times masked:
 * they are the run's own).
 */
const JOB = 'ui-run';
const SCRIPT = [
  'import os',
  'from jupyter_pytorchjob import report',
  'resumed = os.environ.get("PTJOB_RESUME_FROM")',
  'hparams = {"lr": 0.001, "batch_size": 32, "optimizer": "adamw"}',
  'report(hparams={**hparams, "resumed_from": resumed} if resumed else hparams)',
  'report(checkpoint="/mnt/ckpt/step-100.pt", step=100, loss=0.52)',
  'report(checkpoint="/mnt/ckpt/step-200.pt", step=200, loss=0.31)',
  'report(artifact="/mnt/out/model.onnx", name="model")'
].join('\n');

async function openJob(
  page: IJupyterLabPageFixture,
  name: string
): Promise<void> {
  await page.getByRole('tab', { name: 'PyTorch Jobs' }).click();
  const panel = page.getByRole('region', { name: 'PyTorch Jobs' });
  const row = panel.locator(`[data-job="${name}"]`);
  await expect(row).toHaveAttribute('data-state', 'Succeeded', {
    timeout: 90 * 1000
  });
  await row.locator('.jp-PyTorchJobPanel-name').click();
}

test.describe.serial('the Run section and Resume from here', () => {
  test.beforeAll(async ({ request }) => {
    const response = await request.post('pytorchjob/api/jobs', {
      data: { name: JOB, shm: 'off', command: ['python', '-c', SCRIPT] }
    });
    expect(response.status(), await response.text()).toBe(201);
  });

  test.afterAll(async ({ request }) => {
    const answer = await request.get('pytorchjob/api/jobs');
    for (const job of (await answer.json()).jobs) {
      if (job.name.startsWith(JOB)) {
        await request.delete(`pytorchjob/api/jobs/${job.name}`);
      }
    }
  });

  test('shows the hparams, the checkpoints and the artifacts', async ({
    page
  }) => {
    await openJob(page, JOB);
    const section = page.getByRole('region', { name: 'Run', exact: true });
    await expect(section.locator('[data-hparam="optimizer"]')).toContainText(
      'adamw'
    );
    const checkpoints = section.locator('[data-checkpoint]');
    await expect(checkpoints).toHaveCount(2);
    // Newest first.
    await expect(checkpoints.first()).toHaveAttribute(
      'data-checkpoint',
      '/mnt/ckpt/step-200.pt'
    );
    await expect(checkpoints.first()).toContainText('loss 0.31');
    await expect(section.locator('[data-artifact="model"]')).toContainText(
      '/mnt/out/model.onnx'
    );
    await section.scrollIntoViewIfNeeded();
    await expect(section).toHaveScreenshot('run-light.png', {
      mask: [section.locator('.jp-PyTorchJobRun-time')]
    });
  });

  test('reads in the dark theme', async ({ page }) => {
    await useDarkTheme(page);
    await openJob(page, JOB);
    const section = page.getByRole('region', { name: 'Run', exact: true });
    await expect(section.locator('[data-checkpoint]')).toHaveCount(2);
    await section.scrollIntoViewIfNeeded();
    await expect(section).toHaveScreenshot('run-dark.png', {
      mask: [section.locator('.jp-PyTorchJobRun-time')]
    });
  });

  test('Resume from here makes a copy that gets the checkpoint', async ({
    page
  }) => {
    await openJob(page, JOB);
    const section = page.getByRole('region', { name: 'Run', exact: true });
    const older = section.locator('[data-checkpoint="/mnt/ckpt/step-100.pt"]');
    await older.getByRole('button', { name: 'Resume from here' }).click();
    const form = page.locator('.jp-PyTorchJobForm');
    await expect(form).toBeVisible();
    // The server names the copy (the next free <job>-N).
    await expect(form.getByLabel('Name', { exact: true })).toHaveValue(
      `${JOB}-2`
    );
    await expect(form.locator('.jp-PyTorchJobForm-validity')).toHaveText(
      'Valid'
    );
    await form.getByRole('button', { name: 'Submit' }).click();
    // The copy's view opens (the original's stays open behind it).
    const view = page.locator('.jp-PyTorchJobView', {
      has: page.getByRole('heading', { name: `${JOB}-2`, exact: true })
    });
    await expect(view).toBeVisible();
    const resumed = view.getByRole('region', { name: 'Run', exact: true });
    await expect(resumed.locator('[data-hparam="resumed_from"]')).toContainText(
      '/mnt/ckpt/step-100.pt',
      { timeout: 90 * 1000 }
    );
  });
});
