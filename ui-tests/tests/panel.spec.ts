import { expect, test } from '@jupyterlab/galata';

test.describe('PyTorch Jobs panel', () => {
  test('opens from its tab and shows the backend', async ({
    page
  }, testInfo) => {
    const tab = page.getByRole('tab', { name: 'PyTorch Jobs' });
    await expect(tab).toBeVisible();
    await tab.click();

    const panel = page.getByRole('region', { name: 'PyTorch Jobs' });
    await expect(panel).toBeVisible();
    await expect(panel.getByRole('button', { name: 'New job' })).toBeVisible();
    await expect(panel.locator('.jp-PyTorchJobPanel-footer')).toContainText(
      'Backend: local'
    );

    await panel.screenshot({ path: testInfo.outputPath('panel.png') });
  });

  test('opens from the command palette, and the launcher has a card', async ({
    page
  }) => {
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('pytorchjob:open-panel');
    });
    await expect(page.locator('#jp-pytorchjob-panel')).toBeVisible();
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('launcher:create');
    });
    await expect(
      page
        .locator('.jp-LauncherCard[title="Open the form of a new PyTorch job"]')
        .last()
    ).toBeVisible();
  });
});

test('“Run as PyTorchJob…” on a .py file pre-fills the form', async ({
  page,
  tmpPath
}, testInfo) => {
  await page.contents.uploadContent(
    'print("hello")\n',
    'text',
    `${tmpPath}/hello_job.py`
  );
  await page.filebrowser.refresh();
  const item = page.locator('.jp-DirListing-item', { hasText: 'hello_job.py' });
  await item.click({ button: 'right' });
  await page.getByRole('menuitem', { name: 'Run as PyTorchJob…' }).click();

  const form = page.locator('.jp-PyTorchJobForm');
  await expect(form.getByLabel('Command', { exact: true })).toHaveValue(
    'python hello_job.py'
  );
  await expect(
    form.getByLabel('Working directory', { exact: true })
  ).toHaveValue(new RegExp(`/examples/${tmpPath}$`));
  await expect(form.getByLabel('Name', { exact: true })).toHaveValue(
    /^hello-job-[a-z0-9]{5}$/
  );
  await expect(form.locator('.jp-PyTorchJobForm-validity')).toHaveText('Valid');
  await form.screenshot({ path: testInfo.outputPath('run-file.png') });
});
