import { expect, test } from '@jupyterlab/galata';

/**
 * TensorBoard in a JupyterLab tab, on a real local job's log directory (on its
 * PVC), through the Jupyter server's proxy: the `loss` and `accuracy` charts show.
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

test('TensorBoard of a finished job shows its loss chart', async ({
  page,
  request
}, testInfo) => {
  test.setTimeout(180000);
  const name = `tb-${STAMP}`;
  await submit(request, {
    name,
    nodes: 2,
    shm: 'off',
    pvc: [{ claim: 'data', mountPath: '/mnt/data' }],
    logdir: `/mnt/data/runs/${name}`,
    command: ['python', 'mnist_cnn.py', '--epochs', '1', '--samples', '256']
  });
  await waitState(request, name, ['Succeeded']);

  await page.evaluate(async job => {
    await window.jupyterapp.commands.execute('pytorchjob:open-job', {
      name: job
    });
  }, name);
  const view = page.locator('.jp-PyTorchJobView').last();
  await view.getByRole('button', { name: 'TensorBoard' }).click();

  const frame = page.frameLocator('.jp-PyTorchJobTensorBoard iframe');
  await expect(frame.getByText('loss', { exact: true }).first()).toBeVisible({
    timeout: 90000
  });
  await expect(
    frame.getByText('accuracy', { exact: true }).first()
  ).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath('tensorboard.png') });
  await request.delete(`/pytorchjob/api/jobs/${name}`);
});
