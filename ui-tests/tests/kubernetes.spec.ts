import { expect, test } from '@jupyterlab/galata';

/**
 * On the kubernetes backend (the project's fake API, operator simulation on):
 * a job whose master cannot be scheduled shows the scheduler's reason in the
 * job view's replicas table.
 */
test('a Pending replica shows why in the replicas table', async ({
  page,
  request
}, testInfo) => {
  const name = `pending-${Date.now().toString(36)}`;
  const created = await request.post('/pytorchjob/api/jobs', {
    data: { name, nodes: 2, gpus: 4, command: ['python', 'train.py'] }
  });
  expect(created.status()).toBe(201);
  // The scheduler finds no node with 4 free GPUs for the master.
  const fake = process.env.PTJOB_FAKE_KUBE_URL;
  const hook = await request.post(`${fake}/_fake/operator/set_unschedulable`, {
    data: { args: ['team-a', `${name}-master-0`] }
  });
  expect(hook.ok()).toBeTruthy();

  await page.evaluate(async job => {
    await window.jupyterapp.commands.execute('pytorchjob:open-job', {
      name: job
    });
  }, name);
  const view = page.locator('.jp-PyTorchJobView').last();
  const master = view.locator('tr[data-replica="master-0"]');
  await expect(master).toContainText('Unschedulable', { timeout: 30000 });
  await expect(master).toContainText('Insufficient nvidia.com/gpu');
  await expect(view.locator('tr[data-replica="worker-0"]')).toContainText(
    'Pending'
  );
  await page.screenshot({ path: testInfo.outputPath('pending.png') });
});
