import { expect, galata, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Locator, Page } from '@playwright/test';

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

/**
 * The line of a CodeMirror editor (`editor`: the editor or its content) that
 * contains `text`, scrolled into view.
 * CodeMirror renders only the lines near the view, so which are in the page
 * depends on the window's size: the editor is scrolled through, half a view
 * at a time, until the line is rendered.
 */
export async function editorLine(
  editor: Locator,
  text: string
): Promise<Locator> {
  await editor.evaluate(async (node, wanted) => {
    const frame = () =>
      new Promise<void>(resolve => requestAnimationFrame(() => resolve()));
    const root = node.closest('.cm-editor') ?? node;
    const lines = () => Array.from(root.querySelectorAll('.cm-line'));
    // The box that scrolls: CodeMirror's own scroller, or an ancestor of it.
    let scroller: HTMLElement | null = root.querySelector('.cm-scroller');
    while (scroller && scroller.scrollHeight <= scroller.clientHeight) {
      scroller = scroller.parentElement;
    }
    if (!scroller) {
      return;
    }
    scroller.scrollTop = 0;
    for (;;) {
      const found = lines().find(line => line.textContent?.includes(wanted));
      if (found) {
        found.scrollIntoView({ block: 'center' });
        return;
      }
      if (
        scroller.scrollTop + scroller.clientHeight >=
        scroller.scrollHeight - 1
      ) {
        return;
      }
      const shown = lines()[0];
      scroller.scrollTop += Math.max(1, scroller.clientHeight / 2);
      // CodeMirror renders the lines for the new position on a frame after
      // the scroll event: wait until they change (a few frames at most).
      for (let k = 0; k < 10 && lines()[0] === shown; k++) {
        await frame();
      }
    }
  }, text);
  return editor.locator('.cm-line', { hasText: text });
}

/**
 * Resolves once JupyterLab saved its workspace with `text` in it (it saves
 * shortly after a change): what a reload then restores.
 */
export function workspaceSaved(page: Page, text: string): Promise<unknown> {
  return page.waitForRequest(
    request =>
      request.method() === 'PUT' &&
      request.url().includes('/api/workspaces') &&
      (request.postData() ?? '').includes(text),
    { timeout: 30000 }
  );
}
