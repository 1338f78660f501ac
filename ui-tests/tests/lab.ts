import { expect, galata, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Page } from '@playwright/test';

/**
 * What the browser tests share about JupyterLab itself: its Chinese locale,
 * its dark theme.
 */

/**
 * `test.use(CHINESE)`: JupyterLab in Chinese. Needs
 * jupyterlab-language-pack-zh-CN (JupyterLab lists a locale only when its
 * language pack is installed) and our `jupyterlab.locale` entry point.
 */
export const CHINESE = {
  mockSettings: {
    ...galata.DEFAULT_SETTINGS,
    '@jupyterlab/translation-extension:plugin': { locale: 'zh_CN' }
  },
  // Galata waits for a tab named "Launcher", which is "启动页" in Chinese.
  waitForApplication: async (
    // eslint-disable-next-line no-empty-pattern
    {},
    use: (wait: (page: Page) => Promise<void>) => Promise<void>
  ) => {
    await use(async page => {
      await page.locator('#jupyterlab-splash').waitFor({ state: 'detached' });
    });
  }
};

/**
 * Switch JupyterLab to its dark theme, and wait until it shows.
 */
export async function useDarkTheme(
  page: IJupyterLabPageFixture
): Promise<void> {
  await page.evaluate(async () => {
    await window.jupyterapp.commands.execute('apputils:change-theme', {
      theme: 'JupyterLab Dark'
    });
  });
  await expect(page.locator('body')).toHaveAttribute(
    'data-jp-theme-name',
    'JupyterLab Dark'
  );
}
