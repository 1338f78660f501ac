import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { APIRequestContext, Locator } from '@playwright/test';

import { CHINESE, workspaceSaved } from './lab';

/**
 * The log viewer as a terminal, on a real failed local job: a tqdm-like bar
 * redrawn with \r is one line, ANSI colours show, problem lines are marked and
 * reached with the next/previous error buttons, and a failed job's log opens
 * at its first traceback; long lines wrap or scroll sideways, each line can
 * show its time, and the search can show its matching lines alone, all kept
 * by a restored tab. Compared
 * with reference screenshots in the light and dark themes and in Chinese.
 */
const JOB = 'ui-terminal-log';

// Fixed text (no times, no paths that vary) so that screenshots compare.
const SCRIPT = String.raw`import sys
w = sys.stdout.write
print("\x1b[1;32mstarting\x1b[0m training: \x1b[31mred\x1b[0m \x1b[38;5;208morange\x1b[0m \x1b[38;2;30;144;255mtrue colour\x1b[0m", flush=True)
print("config: " + " ".join("option_%02d=value_%02d" % (i, i) for i in range(40)), flush=True)
for i in range(0, 101, 10):
    w("\rtrain: %3d%%|%-10s| %d/10" % (i, "#" * (i // 10), i // 10))
    sys.stdout.flush()
w("\n")
# A traceback a program logged and went on (fixed text: no temporary paths).
print("Traceback (most recent call last):")
print('  File "train.py", line 9, in <module>')
print("ValueError: invalid literal for int() with base 10: 'x'", flush=True)
for i in range(80):
    print("step %2d loss %.2f" % (i, 1 / (i + 1)))
print("ERROR: data loader worker 1 died")
sys.stdout.flush()
raise RuntimeError("boom")
`;

async function submitFailingJob(request: APIRequestContext): Promise<void> {
  await request.delete(`pytorchjob/api/jobs/${JOB}`);
  const response = await request.post('pytorchjob/api/jobs', {
    data: { name: JOB, shm: 'off', restartPolicy: 'Never', script: SCRIPT }
  });
  expect(response.status(), await response.text()).toBe(201);
  await expect
    .poll(
      async () =>
        (await (await request.get(`pytorchjob/api/jobs/${JOB}`)).json()).state,
      { timeout: 90 * 1000 }
    )
    .toBe('Failed');
}

async function openLogs(page: IJupyterLabPageFixture) {
  // The panel knows the job failed: the viewer opens at its first traceback.
  await page.getByRole('tab', { name: /PyTorch/ }).click();
  await expect(page.locator(`[data-job="${JOB}"]`)).toHaveAttribute(
    'data-state',
    'Failed'
  );
  await page.evaluate(async name => {
    await window.jupyterapp.commands.execute('pytorchjob:open-logs', { name });
  }, JOB);
  const logs = page.locator('.jp-PyTorchJobLogs');
  await expect(logs.getByRole('status')).toContainText(/End of log|日志结束/);
  return logs;
}

/**
 * Wrapped lines with their times, and only those matching a search (the
 * toggles pressed).
 */
async function showToggles(logs: Locator): Promise<void> {
  const toggles = logs.locator(
    '.jp-PyTorchJobLogs-wrap, .jp-PyTorchJobLogs-onlyMatching, .jp-PyTorchJobLogs-timestamps'
  );
  await logs.getByRole('searchbox').fill('o');
  // The first match is the current one (English or Chinese).
  await expect(logs.locator('.jp-PyTorchJobLogs-matches')).toHaveText(
    /^(1 of |第 1 个)/
  );
  for (const toggle of await toggles.all()) {
    if ((await toggle.getAttribute('aria-pressed')) !== 'true') {
      await toggle.click();
    }
  }
  await expect(logs.getByRole('log')).toHaveClass(/jp-mod-wrap/);
  await logs.getByRole('log').evaluate(node => (node.scrollTop = 0));
  await expect(
    logs.locator('.jp-PyTorchJobLogs-row', { hasText: 'config:' })
  ).toBeVisible();
  await expect(logs.locator('.jp-PyTorchJobLogs-time').first()).toHaveText(
    /\d/
  );
}

/**
 * A screenshot of the viewer with its toggles pressed: the times (of this
 * run) masked.
 */
const TOGGLES_SHOT = (logs: Locator) => ({
  mask: [logs.locator('.jp-PyTorchJobLogs-time')]
});

test.describe.serial('the log viewer as a terminal', () => {
  test.beforeAll(async ({ request }) => {
    await submitFailingJob(request);
  });

  test('redraws, colours, problem lines and the first traceback', async ({
    page
  }) => {
    const logs = await openLogs(page);
    const lines = logs.getByRole('log');
    const current = lines.locator('.jp-PyTorchJobLogs-row.jp-mod-current');
    // Opened at the first traceback, not at the end.
    await expect(current).toHaveText(
      'master-0 | Traceback (most recent call last):'
    );
    await expect(current).toHaveClass(/jp-mod-traceback/);
    await expect(lines).not.toContainText('RuntimeError: boom');

    // The bar is one line in its last state.
    const bar = lines.locator('.jp-PyTorchJobLogs-row', { hasText: 'train:' });
    await expect(bar).toHaveCount(1);
    await expect(bar).toHaveText('master-0 | train: 100%|##########| 10/10');

    // Colours: rendermime's classes and inline true colour; no codes shown.
    const first = lines.locator('.jp-PyTorchJobLogs-row', {
      hasText: 'starting'
    });
    await expect(first).toHaveText(
      'master-0 | starting training: red orange true colour'
    );
    await expect(first.locator('.ansi-green-intense-fg.ansi-bold')).toHaveText(
      'starting'
    );
    await expect(first.locator('.ansi-red-fg')).toHaveCSS(
      'color',
      'rgb(231, 92, 88)'
    );
    await expect(first.locator('span', { hasText: /^true colour$/ })).toHaveCSS(
      'color',
      'rgb(30, 144, 255)'
    );

    // Search ignores the codes and counts the collapsed bar once.
    const search = logs.getByRole('searchbox', { name: 'Search the log' });
    await search.fill('train: 1');
    await search.press('Enter');
    await expect(logs.locator('.jp-PyTorchJobLogs-matches')).toHaveText(
      '1 of 1'
    );
    await search.fill('');
    await search.press('Enter');

    // Next/previous error walk the problem lines, wrapping.
    await expect(logs.getByText('6 errors')).toBeVisible();
    const next = logs.getByRole('button', { name: /^Next error/ });
    const previous = logs.getByRole('button', { name: /^Previous error/ });
    await next.click();
    await expect(current).toHaveText(
      "master-0 | ValueError: invalid literal for int() with base 10: 'x'"
    );
    await next.click();
    await expect(current).toHaveText(
      'master-0 | ERROR: data loader worker 1 died'
    );
    await expect(current).toHaveClass(/jp-mod-problem/);
    await next.click();
    await expect(current).toHaveText(
      'master-0 | Traceback (most recent call last):'
    );
    await next.click();
    await expect(current).toContainText('raise RuntimeError("boom")');
    await next.click();
    await expect(current).toHaveText('master-0 | RuntimeError: boom');
    await next.click();
    await expect(current).toHaveText(
      'master-0 | Traceback (most recent call last):'
    );
    await previous.click();
    await previous.click();
    await previous.click();
    await previous.click();
    await expect(current).toHaveText(
      'master-0 | ERROR: data loader worker 1 died'
    );
  });

  test('wraps long lines, shows times and only the matching lines, kept on reload', async ({
    page
  }) => {
    const logs = await openLogs(page);
    const lines = logs.getByRole('log');
    const config = lines.locator('.jp-PyTorchJobLogs-row', {
      hasText: 'config:'
    });
    const wrap = logs.getByRole('button', { name: 'Wrap long lines' });
    const only = logs.getByRole('button', {
      name: 'Show only the lines that match the search'
    });
    // Unwrapped: one row high, as wide as its text (the view scrolls sideways).
    await expect(config).toHaveCSS('white-space', 'pre');
    const box = await lines.boundingBox();
    expect((await config.boundingBox())!.height).toBe(18);
    expect((await config.boundingBox())!.width).toBeGreaterThan(box!.width);
    await wrap.click();
    await expect(
      logs.getByRole('button', {
        name: 'Do not wrap long lines: scroll them sideways'
      })
    ).toHaveAttribute('aria-pressed', 'true');
    await expect(config).toHaveCSS('white-space', 'pre-wrap');
    expect((await config.boundingBox())!.height).toBeGreaterThan(18);
    expect((await config.boundingBox())!.width).toBeLessThanOrEqual(box!.width);

    // Only the lines matching the search, counted; next/previous still step.
    const search = logs.getByRole('searchbox', { name: 'Search the log' });
    // Typing searches (Enter would then go to the next match).
    await search.fill('loss 0.0');
    const matches = logs.locator('.jp-PyTorchJobLogs-matches');
    await expect(matches).toHaveText('1 of 70');
    await only.click();
    await expect(
      logs.getByRole('button', { name: 'Show every line' })
    ).toHaveAttribute('aria-pressed', 'true');
    await expect(logs.getByRole('status')).toContainText(
      /70 of \d+ lines shown/
    );
    const rows = lines.locator('.jp-PyTorchJobLogs-row');
    await expect(rows.first()).toHaveText('master-0 | step 10 loss 0.09');
    for (const row of await rows.all()) {
      await expect(row).toContainText('loss 0.0');
    }
    // Virtualised all the same: only the rows in view are in the page.
    expect(await rows.count()).toBeLessThan(70);
    await logs.getByRole('button', { name: 'Previous match' }).click();
    await expect(matches).toHaveText('70 of 70');
    await expect(lines.locator('.jp-mod-current')).toHaveText(
      'master-0 | step 79 loss 0.01'
    );

    // Each line's time (the log read again with its stamps), before the line.
    // The workspace saved with the tab's toggles: what a reload restores.
    const saved = workspaceSaved(page, '"timestamps":true');
    await logs.getByRole('button', { name: 'Show each line’s time' }).click();
    await expect(
      logs.getByRole('button', { name: 'Hide the lines’ times' })
    ).toHaveAttribute('aria-pressed', 'true');
    await expect(lines.locator('.jp-PyTorchJobLogs-time').first()).toHaveText(
      /^\d\d:\d\d:\d\d\.\d{3} $/
    );
    await expect(rows.first()).toContainText('loss 0.0');

    // All stay pressed in the tab restored by a reload (the search does not).
    await saved;
    await page.reload({ waitForIsReady: false });
    const restored = page.locator('.jp-PyTorchJobLogs');
    await expect(
      restored.getByRole('button', {
        name: 'Do not wrap long lines: scroll them sideways'
      })
    ).toHaveAttribute('aria-pressed', 'true');
    await expect(
      restored.getByRole('button', { name: 'Show every line' })
    ).toHaveAttribute('aria-pressed', 'true');
    await expect(
      restored.getByRole('button', { name: 'Hide the lines’ times' })
    ).toHaveAttribute('aria-pressed', 'true');
    await expect(restored.getByRole('log')).toHaveClass(/jp-mod-wrap/);
    await expect(
      restored.locator('.jp-PyTorchJobLogs-time').first()
    ).toHaveText(/^\d\d:\d\d:\d\d\.\d{3} $/);
  });

  for (const theme of ['JupyterLab Light', 'JupyterLab Dark']) {
    test(`looks as it should in ${theme}`, async ({ page }) => {
      await page.evaluate(async name => {
        await window.jupyterapp.commands.execute('apputils:change-theme', {
          theme: name
        });
      }, theme);
      await expect(page.locator('body')).toHaveAttribute(
        'data-jp-theme-name',
        theme
      );
      const logs = await openLogs(page);
      await expect(logs.locator('.jp-mod-current')).toContainText('Traceback');
      const name = theme.split(' ')[1].toLowerCase();
      await expect(logs).toHaveScreenshot(`logs-${name}.png`);
      await showToggles(logs);
      await expect(logs).toHaveScreenshot(
        `logs-toggles-${name}.png`,
        TOGGLES_SHOT(logs)
      );
    });
  }
});

/**
 * Two replicas' lines come in merged chunks (each line's replica named in the
 * chunk): every line shows with its own replica, in all and in each tab.
 */
const TWO = 'ui-merged-log';

test('a merged log shows each line with its replica', async ({
  page,
  request
}) => {
  await request.delete(`pytorchjob/api/jobs/${TWO}`);
  const script = String.raw`import os
for i in range(6):
    print("rank %s line %d" % (os.environ["RANK"], i), flush=True)
`;
  const response = await request.post('pytorchjob/api/jobs', {
    data: { name: TWO, nodes: 2, shm: 'off', script }
  });
  expect(response.status(), await response.text()).toBe(201);
  // Both replicas done (a worker may end after the master): the log ends.
  await expect
    .poll(
      async () => {
        const job = await (
          await request.get(`pytorchjob/api/jobs/${TWO}`)
        ).json();
        const phases = job.replicas.map((r: { phase: string }) => r.phase);
        return [job.state, ...phases].join(' ');
      },
      { timeout: 90 * 1000 }
    )
    .toBe('Succeeded Succeeded Succeeded');
  await page.evaluate(async name => {
    await window.jupyterapp.commands.execute('pytorchjob:open-logs', { name });
  }, TWO);
  const logs = page.locator('.jp-PyTorchJobLogs');
  await expect(logs.getByRole('status')).toContainText('End of log');
  const rows = logs.getByRole('log').locator('.jp-PyTorchJobLogs-row');
  await expect(rows).toHaveCount(12);
  for (const [replica, rank] of [
    ['master-0', 0],
    ['worker-0', 1]
  ]) {
    for (let i = 0; i < 6; i++) {
      await expect(
        rows.filter({ hasText: `rank ${rank} line ${i}` })
      ).toHaveText(new RegExp(`^${replica}\\s*\\| rank ${rank} line ${i}$`));
    }
  }
  await logs.getByRole('tab', { name: 'worker-0' }).click();
  await expect(rows).toHaveCount(6);
  await expect(rows.filter({ hasText: 'rank 0' })).toHaveCount(0);
  await request.delete(`pytorchjob/api/jobs/${TWO}`);
});

test.describe('the log viewer in Chinese', () => {
  test.use(CHINESE);

  test('says next/previous error in Chinese', async ({ page, request }) => {
    const answer = await request.get('/lab/api/translations/zh_CN');
    const catalogue = answer.ok() ? await answer.json() : {};
    test.skip(
      !catalogue?.data?.jupyter_pytorchjob,
      'no zh_CN language pack on this server'
    );
    if (!(await request.get(`pytorchjob/api/jobs/${JOB}`)).ok()) {
      await submitFailingJob(request);
    }
    const logs = await openLogs(page);
    await expect(
      logs.getByRole('button', { name: /^下一个错误/ })
    ).toBeVisible();
    await expect(logs.getByText('6 个错误')).toBeVisible();
    await expect(logs).toHaveScreenshot('logs-zh_CN.png');
    await showToggles(logs);
    await expect(logs).toHaveScreenshot(
      'logs-toggles-zh_CN.png',
      TOGGLES_SHOT(logs)
    );
  });
});
