import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import { CHINESE, useDarkTheme } from './lab';

test.describe('PyTorch Jobs panel', () => {
  test('leaves the left sidebar to the file browser on first load', async ({
    page
  }) => {
    await expect(
      page.getByRole('tab', { name: /^File Browser/ })
    ).toHaveAttribute('aria-selected', 'true');
    await expect(
      page.getByRole('tab', { name: 'PyTorch Jobs' })
    ).toHaveAttribute('aria-selected', 'false');
    await expect(page.locator('#jp-pytorchjob-panel')).toBeHidden();
  });

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

/**
 * The panel's header at JupyterLab's default sidebar width (#32): with
 * *Compare (2)* shown and a scrollbar, the title stays on one line, every
 * toolbar button shows whole, nothing scrolls sideways. The title and toolbar
 * are compared with their snapshots in light, dark and Chinese.
 */
test.describe('the panel header at the default sidebar width', () => {
  const JOBS = Array.from({ length: 6 }, (_, i) => `ui-layout-${i}`);
  test.use({ viewport: { width: 1400, height: 450 } });

  test.beforeAll(async ({ request }) => {
    for (const name of JOBS) {
      await request.delete(`pytorchjob/api/jobs/${name}`);
      const response = await request.post('pytorchjob/api/jobs', {
        data: { name, command: ['python', '-c', 'pass'], shm: 'off' }
      });
      expect(response.status(), await response.text()).toBe(201);
    }
  });

  test.afterAll(async ({ request }) => {
    for (const name of JOBS) {
      await request.delete(`pytorchjob/api/jobs/${name}`);
    }
  });

  /**
   * What each variant calls things: the panel, a row's check box, the button.
   */
  const WORDS = {
    en: {
      panel: 'PyTorch Jobs',
      select: (job: string) => `Select ${job}`,
      compare: 'Compare (2)'
    },
    zh_CN: {
      panel: 'PyTorch 作业',
      select: (job: string) => `选择 ${job}`,
      compare: '比较（2）'
    }
  };

  /**
   * Select two jobs, check the header's layout, compare it with `snapshot`.
   */
  async function checkHeader(
    page: IJupyterLabPageFixture,
    words: (typeof WORDS)['en'],
    snapshot: string,
    shot: string
  ): Promise<void> {
    await page.getByRole('tab', { name: words.panel }).click();
    const panel = page.getByRole('region', { name: words.panel });
    for (const name of JOBS.slice(0, 2)) {
      await panel.getByRole('checkbox', { name: words.select(name) }).check();
    }
    await expect(
      panel.getByRole('button', { name: words.compare })
    ).toBeVisible();
    await panel.screenshot({ path: shot });
    // A scrollbar: the list is longer than the panel.
    expect(
      await panel.evaluate(node => node.scrollHeight > node.clientHeight)
    ).toBe(true);
    // Nothing scrolls sideways, the title is one line, no label is cut.
    expect(
      await panel.evaluate(node => node.scrollWidth <= node.clientWidth)
    ).toBe(true);
    const title = panel.locator('.jp-PyTorchJobPanel-title');
    expect((await title.boundingBox())!.height).toBeLessThanOrEqual(30);
    const toolbar = panel.getByRole('toolbar');
    expect((await toolbar.boundingBox())!.height).toBeLessThanOrEqual(34);
    const cut = await toolbar.evaluate(node =>
      Array.from(node.querySelectorAll('.jp-ToolbarButtonComponent-label'))
        .filter(label => label.scrollWidth > label.clientWidth)
        .map(label => label.textContent)
    );
    expect(cut).toEqual([]);
    // Rows: each name left-aligned next to its check box, "Logs" readable.
    const rows = await panel.evaluate(node =>
      Array.from(node.querySelectorAll('.jp-PyTorchJobPanel-row')).map(row => {
        const box = row.querySelector('input')!.getBoundingClientRect();
        const name = row
          .querySelector('.jp-PyTorchJobPanel-name')!
          .getBoundingClientRect();
        return Math.round(name.left - box.right);
      })
    );
    expect(new Set(rows).size).toBe(1);
    expect(rows[0]).toBeLessThanOrEqual(8);
    const logs = panel.locator('.jp-PyTorchJobPanel-link').first();
    expect(
      await logs.evaluate(node => parseFloat(getComputedStyle(node).fontSize))
    ).toBeGreaterThanOrEqual(12);
    await expect(panel.locator('.jp-PyTorchJobPanel-top')).toHaveScreenshot(
      snapshot
    );
  }

  for (const theme of ['light', 'dark']) {
    test(`stays one line with Compare (2) and a scrollbar (${theme})`, async ({
      page
    }, testInfo) => {
      if (theme === 'dark') {
        await useDarkTheme(page);
      }
      await checkHeader(
        page,
        WORDS.en,
        `panel-header-${theme}.png`,
        testInfo.outputPath(`panel-${theme}.png`)
      );
    });
  }

  test.describe('in Chinese', () => {
    test.use(CHINESE);

    test('stays one line', async ({ page }, testInfo) => {
      await checkHeader(
        page,
        WORDS.zh_CN,
        'panel-header-zh_CN.png',
        testInfo.outputPath('panel-zh_CN.png')
      );
    });
  });
});
