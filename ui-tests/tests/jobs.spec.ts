import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import { editorLine, useDarkTheme } from './lab';

/**
 * The whole flow on the local backend: form → YAML → submit a real 2-node
 * DDP job → Succeeded in the list → logs of both replicas → search → delete.
 */
const JOB = `ui-ddp-${Date.now().toString(36)}`;

async function openPanel(page: IJupyterLabPageFixture) {
  await page.getByRole('tab', { name: 'PyTorch Jobs' }).click();
  const panel = page.getByRole('region', { name: 'PyTorch Jobs' });
  await expect(panel).toBeVisible();
  return panel;
}

test.describe.serial('a job from the form to its logs', () => {
  test('the form shows the server message, previews YAML and submits', async ({
    page
  }, testInfo) => {
    const panel = await openPanel(page);
    await panel.getByRole('button', { name: 'New job' }).click();

    const form = page.locator('.jp-PyTorchJobForm');
    await expect(form).toBeVisible();
    const name = form.getByLabel('Name', { exact: true });
    await expect(name).toHaveValue(/^ptjob-[a-z0-9]{5}$/);

    // An invalid name: the server's message shows under the name field.
    await name.fill('Bad_Name');
    const nameError = form.locator(
      '[data-field="name"] .jp-PyTorchJobForm-error'
    );
    await expect(nameError).toContainText('DNS-1035 label');
    await form.screenshot({ path: testInfo.outputPath('form-invalid.png') });

    // Fixed.
    await name.fill(JOB);
    await form
      .getByLabel('Command', { exact: true })
      .fill('python train_ddp.py --epochs 1');
    await form.getByLabel('Nodes', { exact: true }).fill('2');
    await expect(form.locator('.jp-PyTorchJobForm-nodes')).toHaveText(
      '2 nodes = 1 master + 1 worker'
    );
    await expect(nameError).toHaveCount(0);
    await expect(form.locator('.jp-PyTorchJobForm-validity')).toHaveText(
      'Valid'
    );

    // The YAML preview shows the manifest.
    await form.getByRole('button', { name: 'Preview YAML' }).click();
    // JupyterLab's editor (CodeMirror) holds it.
    const yaml = form.getByRole('textbox', { name: 'Manifest (YAML)' });
    await expect(yaml).toContainText('kind: PyTorchJob');
    await expect(yaml).toContainText(`name: ${JOB}`);
    // Lines out of the editor's view are not rendered: scrolled to first.
    await expect(await editorLine(yaml, 'Worker:')).toBeVisible();
    await form.screenshot({ path: testInfo.outputPath('form-yaml.png') });

    // Editing the YAML updates the form.
    await (await editorLine(yaml, 'backoffLimit: 3')).click();
    await page.keyboard.press('End');
    await page.keyboard.press('Backspace');
    await page.keyboard.type('5');
    await form.getByRole('button', { name: 'Apply YAML' }).click();
    await form.getByRole('button', { name: 'Advanced' }).click();
    await expect(form.getByLabel('Backoff limit', { exact: true })).toHaveValue(
      '5'
    );

    await form.getByRole('button', { name: 'Submit' }).click();
    const view = page.locator('.jp-PyTorchJobView');
    await expect(view.locator('.jp-PyTorchJobView-title')).toHaveText(JOB);
    await expect(view.locator('.jp-PyTorchJobView-replicas')).toContainText(
      'worker-0'
    );
    await page.screenshot({ path: testInfo.outputPath('job-view.png') });
  });

  test('the job reaches Succeeded in the list', async ({ page }, testInfo) => {
    const panel = await openPanel(page);
    const row = panel.locator(`[data-job="${JOB}"]`);
    await expect(row).toBeVisible();
    await expect(row).toHaveAttribute('data-state', 'Succeeded', {
      timeout: 90 * 1000
    });
    await expect(row.locator('.jp-PyTorchJob-badge')).toHaveText('Succeeded');
    await panel.screenshot({ path: testInfo.outputPath('list-succeeded.png') });
  });

  test('the logs show both replicas and can be searched', async ({
    page
  }, testInfo) => {
    const panel = await openPanel(page);
    await panel.getByRole('button', { name: `Logs of ${JOB}` }).click();
    const logs = page.locator('.jp-PyTorchJobLogs');
    const lines = logs.getByRole('log');
    await expect(lines).toContainText('master-0 | ');
    await expect(lines).toContainText('worker-0 | ');
    await expect(lines).toContainText('training done');
    await expect(logs.getByRole('status')).toContainText('End of log');
    await page.screenshot({ path: testInfo.outputPath('logs.png') });

    // One tab per replica.
    await logs.getByRole('tab', { name: 'worker-0' }).click();
    await expect(lines).not.toContainText('master-0 | ');
    await expect(lines).toContainText('rank 1 epoch 0');
    await logs.getByRole('tab', { name: 'All replicas' }).click();

    // Search highlights the matches.
    const search = logs.getByRole('searchbox', { name: 'Search the log' });
    await search.fill('epoch 0');
    await search.press('Enter');
    await expect(logs.locator('.jp-PyTorchJobLogs-matches')).toHaveText(
      '1 of 2'
    );
    await expect(logs.locator('mark.jp-PyTorchJobLogs-match')).toHaveCount(2);
    await page.screenshot({ path: testInfo.outputPath('logs-search.png') });
  });

  test('the job is deleted after confirmation', async ({ page }, testInfo) => {
    const panel = await openPanel(page);
    const row = panel.locator(`[data-job="${JOB}"]`);
    await expect(row).toBeVisible();
    await panel.getByRole('button', { name: `Delete ${JOB}` }).click();
    const dialog = page.locator('.jp-Dialog');
    await expect(dialog).toContainText(`Delete job ${JOB}?`);
    await page.screenshot({ path: testInfo.outputPath('delete-dialog.png') });
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await expect(row).toHaveCount(0);
    await panel.screenshot({ path: testInfo.outputPath('deleted.png') });
  });
});

test('the dark theme renders the panel and the form', async ({
  page
}, testInfo) => {
  await useDarkTheme(page);
  const panel = await openPanel(page);
  await panel.getByRole('button', { name: 'New job' }).click();
  await expect(page.locator('.jp-PyTorchJobForm')).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath('dark.png') });
});
