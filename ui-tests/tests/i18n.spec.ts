import { expect, test } from '@jupyterlab/galata';

import { IN_CHINESE } from './chinese';

/**
 * With JupyterLab in Chinese, the panel, the form and the log viewer speak
 * Chinese. Needs jupyterlab-language-pack-zh-CN (JupyterLab lists a locale
 * only when its language pack is installed) and our `jupyterlab.locale` entry
 * point; skipped when the server has no zh_CN catalogue of ours.
 */
test.describe('in Chinese', () => {
  test.use(IN_CHINESE);

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
});
