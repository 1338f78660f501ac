import { expect, test } from '@jupyterlab/galata';

import { workspaceSaved } from './lab';

/**
 * TensorBoard in a JupyterLab tab, on a real local job's log directory (on its
 * PVC), through the Jupyter server's proxy: the `loss` and `accuracy` charts
 * show; new steps of a running job show up without a click; *Open TensorBoard…*
 * picks a directory; the panel (and JupyterLab's Running panel) lists running
 * TensorBoards, and stops them.
 */
const STAMP = Date.now().toString(36);

async function submit(
  request: import('@playwright/test').APIRequestContext,
  body: Record<string, unknown>
) {
  const response = await request.post('/pytorchjob/api/jobs', { data: body });
  expect(response.status()).toBe(201);
}

async function waitState(
  request: import('@playwright/test').APIRequestContext,
  name: string,
  states: string[]
) {
  await expect
    .poll(
      async () =>
        (await (await request.get(`/pytorchjob/api/jobs/${name}`)).json())
          .state,
      { timeout: 120000, intervals: [500] }
    )
    .toMatch(new RegExp(`^(${states.join('|')})$`));
}

/**
 * Run a job on the `data` claim writing TensorBoard events to its `runs/NAME`.
 */
async function submitWriter(
  request: import('@playwright/test').APIRequestContext,
  name: string,
  body: Record<string, unknown>
) {
  await submit(request, {
    name,
    shm: 'off',
    pvc: [{ claim: 'data', mountPath: '/mnt/data' }],
    logdir: `/mnt/data/runs/${name}`,
    ...body
  });
}

/**
 * Open a job's view and press its *TensorBoard* button; the tab's frame.
 */
async function openFromJobView(
  page: import('@jupyterlab/galata').IJupyterLabPageFixture,
  name: string
) {
  await page.evaluate(async job => {
    await window.jupyterapp.commands.execute('pytorchjob:open-job', {
      name: job
    });
  }, name);
  const view = page.locator('.jp-PyTorchJobView').last();
  await view.getByRole('button', { name: 'TensorBoard' }).click();
  return page.frameLocator('.jp-PyTorchJobTensorBoard iframe');
}

test('TensorBoard of a finished job shows its loss chart', async ({
  page,
  request
}, testInfo) => {
  test.setTimeout(180000);
  const name = `tb-${STAMP}`;
  await submitWriter(request, name, {
    nodes: 2,
    command: ['python', 'mnist_cnn.py', '--epochs', '1', '--samples', '256']
  });
  await waitState(request, name, ['Succeeded']);

  const frame = await openFromJobView(page, name);
  await expect(frame.getByText('loss', { exact: true }).first()).toBeVisible({
    timeout: 90000
  });
  await expect(
    frame.getByText('accuracy', { exact: true }).first()
  ).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath('tensorboard.png') });
  await request.delete(`/pytorchjob/api/jobs/${name}`);
});

/**
 * A job that writes `loss` every 1.5 s for a minute, and a second tag, `late`,
 * from its 8th step on: it appears only if the tab fetches new data by itself.
 */
const SLOW_WRITER = `
import os, time
from torch.utils.tensorboard import SummaryWriter
writer = SummaryWriter(os.environ["PTJOB_LOGDIR"])
for step in range(40):
    writer.add_scalar("loss", 1.0 / (step + 1), step)
    if step >= 8:
        writer.add_scalar("late", float(step), step)
    writer.flush()
    print("step", step, flush=True)
    time.sleep(1.5)
writer.close()
`;

/**
 * The highest `loss` step in the answers TensorBoard's page fetched.
 */
function maxStep(body: string): number {
  let max = -1;
  for (const match of body.matchAll(/"step":\s*(\d+)/g)) {
    max = Math.max(max, Number(match[1]));
  }
  return max;
}

test('a running job: new steps show up in the open tab without any click', async ({
  page,
  request
}, testInfo) => {
  test.setTimeout(180000);
  const name = `tblive-${STAMP}`;
  await submitWriter(request, name, { nodes: 1, script: SLOW_WRITER });
  await waitState(request, name, ['Running']);

  // Every scalar answer TensorBoard's page receives, with its highest step.
  const steps: number[] = [];
  page.on('response', async response => {
    if (/\/data\/plugin\/timeseries\/timeSeries$/.test(response.url())) {
      try {
        steps.push(maxStep(await response.text()));
      } catch {
        // the page navigated away
      }
    }
  });

  const frame = await openFromJobView(page, name);
  await expect(frame.getByText('loss', { exact: true }).first()).toBeVisible({
    timeout: 60000
  });
  await expect.poll(() => steps.length, { timeout: 30000 }).toBeGreaterThan(0);
  const first = Math.max(...steps);
  await page.screenshot({ path: testInfo.outputPath('live-first.png') });

  // No click from here on: the tab and TensorBoard reload by themselves.
  const since = Date.now();
  await expect
    .poll(() => Math.max(...steps), { timeout: 60000, intervals: [1000] })
    .toBeGreaterThan(first);
  // A figure for the notes, not an assertion: how long until new data came.
  console.log(
    `TensorBoard tab: step ${first} -> ${Math.max(...steps)} after ` +
      `${((Date.now() - since) / 1000).toFixed(1)} s without a click`
  );
  await expect(frame.getByText('late', { exact: true }).first()).toBeVisible({
    timeout: 60000
  });
  await page.screenshot({ path: testInfo.outputPath('live-later.png') });
  await request.delete(`/pytorchjob/api/jobs/${name}`);
});

test('Open TensorBoard… on a picked directory; the panel lists and stops it', async ({
  page,
  request,
  tmpPath
}, testInfo) => {
  test.setTimeout(120000);
  // In the test's own directory, where the file browser (and the picker) is.
  const dir = `tb-dir-${STAMP}`;
  const made = await request.put(`/api/contents/${tmpPath}/${dir}`, {
    data: { type: 'directory' }
  });
  expect(made.status()).toBe(201);
  await page.filebrowser.refresh();

  await page.evaluate(() => {
    void window.jupyterapp.commands.execute('pytorchjob:open-tensorboard');
  });
  const dialog = page.locator('.jp-Dialog');
  await expect(dialog).toBeVisible();
  await dialog.locator('.jp-DirListing-item', { hasText: dir }).first().click();
  await dialog.getByRole('button', { name: 'Select' }).click();

  const tab = page.locator('.jp-PyTorchJobTensorBoard').last();
  await expect(tab).toHaveAttribute('data-tensorboard', /^[0-9a-f]{12}$/, {
    timeout: 60000
  });
  const id = await tab.getAttribute('data-tensorboard');
  const frame = page.frameLocator('.jp-PyTorchJobTensorBoard iframe');
  await expect(frame.getByText('TensorBoard').first()).toBeVisible({
    timeout: 30000
  });
  await expect(
    page.getByRole('tab', { name: `TensorBoard: ${dir}` })
  ).toBeVisible();

  // The side panel lists it, with its directory.
  await page.evaluate(async () => {
    await window.jupyterapp.commands.execute('pytorchjob:open-panel');
  });
  const row = page.locator(
    `.jp-PyTorchJobTensorBoards-item[data-tensorboard="${id}"]`
  );
  await expect(row).toBeVisible({ timeout: 30000 });
  await expect(row).toContainText(dir);
  await page.screenshot({ path: testInfo.outputPath('list.png') });

  // Stopped behind the tab's back (another page, `ptjob`, idle culling): the
  // tab says so on its next tick, and starts it again under the same URL.
  expect(
    (await request.delete(`/pytorchjob/api/tensorboards/${id}`)).status()
  ).toBe(204);
  const notice = tab.locator('.jp-PyTorchJobTensorBoard-stopped');
  await expect(notice).toContainText('has stopped', { timeout: 30000 });
  await page.screenshot({ path: testInfo.outputPath('stopped.png') });
  await notice.getByRole('button', { name: 'Start again' }).click();
  await expect(notice).toHaveCount(0, { timeout: 30000 });
  await expect(tab).toHaveAttribute('data-tensorboard', id!);
  await expect(frame.getByText('TensorBoard').first()).toBeVisible({
    timeout: 30000
  });

  // And JupyterLab's Running panel, under "TensorBoards".
  await page.sidebar.openTab('jp-running-sessions');
  const running = page.locator(
    `.jp-PyTorchJobTensorBoards-running[data-context="${id}"]`
  );
  await expect(running).toBeVisible({ timeout: 30000 });
  await expect(running).toContainText(dir);
  await page.screenshot({ path: testInfo.outputPath('running.png') });
  await page.evaluate(async () => {
    await window.jupyterapp.commands.execute('pytorchjob:open-panel');
  });

  // Stop from the list: the row and the tab go, and so does the process.
  await row.getByRole('button', { name: `Stop TensorBoard ${dir}` }).click();
  await expect(row).toHaveCount(0);
  await expect(page.locator('.jp-PyTorchJobTensorBoard')).toHaveCount(0);
  const listed = await (
    await request.get('/pytorchjob/api/tensorboards')
  ).json();
  expect(listed.map((b: { id: string }) => b.id)).not.toContain(id);
});

test('a restored tab whose TensorBoard failed shows why, with Retry, and no toast', async ({
  page,
  request
}) => {
  // A job without --logdir: its TensorBoard cannot start.
  const name = `tb-none-${STAMP}`;
  await submit(request, {
    name,
    shm: 'off',
    command: ['python', '-c', 'pass']
  });
  const failedStarts = () =>
    page.notifications.then(
      list =>
        list.filter(n => n.message.includes('Could not start TensorBoard'))
          .length
    );
  // The workspace saved with the tab's failure (JupyterLab saves it shortly
  // after a change): what the reload restores.
  const saved = workspaceSaved(page, '"failure"');
  await page.evaluate(async job => {
    await window.jupyterapp.commands.execute('pytorchjob:open-tensorboard', {
      name: job
    });
  }, name);
  const tab = page.locator('.jp-PyTorchJobTensorBoard');
  const failure = tab.locator('.jp-PyTorchJobTensorBoard-failed');
  await expect(failure).toBeVisible();
  await expect(failure.getByRole('button', { name: 'Retry' })).toBeVisible();
  // Asked for by the user: said in a toast too.
  expect(await failedStarts()).toBe(1);

  // Reloaded: the tab comes back with the error and Retry, without trying
  // (nor telling) again.
  await saved;
  await page.reload({ waitForIsReady: false });
  await page.evaluate(() => window.jupyterapp.restored);
  await expect(failure).toBeVisible();
  await expect(failure).toHaveText(/\S/);
  expect(await failedStarts()).toBe(0);

  // Retry tries again: still failing, said in the tab only.
  await failure.getByRole('button', { name: 'Retry' }).click();
  await expect(failure.getByRole('button', { name: 'Retry' })).toBeEnabled();
  await expect(failure).toBeVisible();
  expect(await failedStarts()).toBe(0);
});
