import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import { CHINESE, useDarkTheme } from './lab';

/**
 * A new job's form in Chinese, submitted without a command, then given -1
 * nodes: the server refuses both, and the form shows its messages translated
 * by code.
 */
async function refusedInChinese(page: IJupyterLabPageFixture) {
  await page.getByRole('tab', { name: 'PyTorch 作业' }).click();
  const panel = page.getByRole('region', { name: 'PyTorch 作业' });
  await panel.getByRole('button', { name: '新建作业' }).click();
  const form = page.locator('.jp-PyTorchJobForm');
  await expect(form).toBeVisible();
  await form.getByRole('button', { name: '提交' }).click();
  await expect(form.locator('[data-field="command"] [role=alert]')).toHaveText(
    '必填：提供命令（例如 python train.py）或脚本'
  );
  await form.getByLabel('节点数', { exact: true }).fill('-1');
  await expect(form.locator('[data-field="nodes"] [role=alert]')).toHaveText(
    '必须是 >= 1 的整数，实际为 -1'
  );
  return form;
}

/**
 * With JupyterLab in Chinese, the panel, the form and the log viewer speak
 * Chinese. Needs jupyterlab-language-pack-zh-CN (JupyterLab lists a locale
 * only when its language pack is installed) and our `jupyterlab.locale` entry
 * point; skipped when the server has no zh_CN catalogue of ours.
 */
test.describe('in Chinese', () => {
  test.use(CHINESE);
  test.use({ viewport: { width: 1400, height: 900 } });

  test('the panel and the form show Chinese labels', async ({
    page,
    request
  }, testInfo) => {
    const answer = await request.get('/lab/api/translations/zh_CN');
    const catalogue = answer.ok() ? await answer.json() : {};
    // The catalogue must be served (language pack + our jupyterlab.locale entry point).
    expect(catalogue?.data?.jupyter_pytorchjob).toBeTruthy();

    await page.getByRole('tab', { name: 'PyTorch 作业' }).click();
    const panel = page.getByRole('region', { name: 'PyTorch 作业' });
    await expect(panel).toBeVisible();
    await expect(panel.getByRole('heading', { level: 2 })).toHaveText(
      'PyTorch 作业'
    );
    await panel.getByRole('button', { name: '新建作业' }).click();

    const form = page.locator('.jp-PyTorchJobForm');
    await expect(form.getByRole('button', { name: '基本信息' })).toBeVisible();
    await expect(form.getByLabel('节点数', { exact: true })).toBeVisible();
    await form.getByLabel('节点数', { exact: true }).fill('3');
    await expect(form.locator('.jp-PyTorchJobForm-nodes')).toHaveText(
      '3 个节点 = 1 个 master + 2 个 worker'
    );
    await expect(form.getByRole('button', { name: '预览 YAML' })).toBeVisible();
    await page.screenshot({ path: testInfo.outputPath('zh_CN.png') });
  });

  for (const theme of ['light', 'dark']) {
    test(`the server's refusal reads in Chinese (${theme})`, async ({
      page
    }) => {
      if (theme === 'dark') {
        await useDarkTheme(page);
      }
      const form = await refusedInChinese(page);
      // No focus ring, no spin buttons under the pointer.
      await form.getByLabel('节点数', { exact: true }).blur();
      await page.mouse.move(0, 0);
      for (const field of ['command', 'nodes']) {
        const row = form.locator(`[data-field="${field}"]`);
        // Clear of the sticky Submit bar at the form's bottom.
        await row.evaluate(element =>
          element.scrollIntoView({ block: 'center' })
        );
        await expect(row).toHaveScreenshot(`refused-${field}-zh-${theme}.png`);
      }
    });
  }
});
