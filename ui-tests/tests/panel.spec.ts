import { expect, test } from '@jupyterlab/galata';

test.describe('PyTorch Jobs panel', () => {
  test('shows the backend from the config endpoint', async ({
    page
  }, testInfo) => {
    const tab = page.getByRole('tab', { name: 'PyTorch Jobs' });
    await expect(tab).toBeVisible();
    await tab.click();

    const panel = page.getByRole('region', { name: 'PyTorch Jobs' });
    await expect(panel).toBeVisible();
    const status = panel.getByRole('status', { name: 'Server status' });
    await expect(status).toContainText('Backend: local');
    await expect(status).toContainText(/Version: \d+\.\d+\.\d+/);

    await panel.screenshot({ path: testInfo.outputPath('panel.png') });
    await page.screenshot({ path: testInfo.outputPath('lab.png') });
  });

  test('opens from the command palette', async ({ page }) => {
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('pytorchjob:open-panel');
    });
    await expect(page.locator('#jp-pytorchjob-panel')).toBeVisible();
  });
});
