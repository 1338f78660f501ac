import { galata } from '@jupyterlab/galata';

/**
 * `test.use(IN_CHINESE)`: JupyterLab in Chinese. Needs
 * jupyterlab-language-pack-zh-CN (JupyterLab lists a locale only when its
 * language pack is installed) and our `jupyterlab.locale` entry point.
 */
export const IN_CHINESE = {
  mockSettings: {
    ...galata.DEFAULT_SETTINGS,
    '@jupyterlab/translation-extension:plugin': { locale: 'zh_CN' }
  },
  // Galata waits for a tab named "Launcher", which is "启动页" in Chinese.
  // eslint-disable-next-line no-empty-pattern
  waitForApplication: async ({}, use: (wait: any) => Promise<void>) => {
    await use(async (page: any) => {
      await page.locator('#jupyterlab-splash').waitFor({ state: 'detached' });
    });
  }
};
