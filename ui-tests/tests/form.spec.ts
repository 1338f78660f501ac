import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import { useDarkTheme } from './lab';

/**
 * The job form as a new user meets it (#32): no errors before an edit, a
 * refused submit that names the field and puts the focus in it, Submit in
 * view at the bottom of a long form, the tab named after the kind. The form
 * with its error is compared with its snapshot in the light and dark themes.
 */

async function openForm(page: IJupyterLabPageFixture) {
  await page.getByRole('tab', { name: 'PyTorch Jobs' }).click();
  const panel = page.getByRole('region', { name: 'PyTorch Jobs' });
  await panel.getByRole('button', { name: 'New job' }).click();
  const form = page.locator('.jp-PyTorchJobForm');
  await expect(form).toBeVisible();
  return form;
}

/**
 * What differs between runs and machines: the suggested name, the server's
 * working directory.
 */
function varying(form: Locator): Locator[] {
  return [
    form.getByLabel('Name', { exact: true }),
    form.getByLabel('Working directory', { exact: true })
  ];
}

/**
 * The form after a submit refused for its empty command.
 */
async function refusedSubmit(page: IJupyterLabPageFixture) {
  const form = await openForm(page);
  await form.getByRole('button', { name: 'Submit' }).click();
  await expect(form.locator('.jp-PyTorchJobForm-validity')).toHaveText(
    '1 field to fix: Command'
  );
  return form;
}

test.describe('the job form', () => {
  test.use({ viewport: { width: 1400, height: 900 } });

  test('shows no errors before an edit, even for an empty script', async ({
    page
  }) => {
    const form = await openForm(page);
    await expect(
      page.locator('.lm-TabBar-tabLabel', { hasText: 'New PyTorchJob' })
    ).toBeVisible();
    await expect(form.locator('h2')).toHaveText('New PyTorchJob');
    await form.getByLabel('A script shipped with the job').check();
    await expect(form.getByLabel('Script', { exact: true })).toBeVisible();
    await expect(form.locator('.jp-PyTorchJobForm-validity')).not.toHaveText(
      'Checking…'
    );
    await expect(form.locator('.jp-PyTorchJobForm-error')).toHaveCount(0);
  });

  test('a refused submit names the field and focuses it', async ({ page }) => {
    const form = await refusedSubmit(page);
    const command = form.getByLabel('Command', { exact: true });
    await expect(command).toBeFocused();
    await expect(
      form.locator('[data-field="command"] [role=alert]')
    ).toHaveText(/^Command is required/);
    // Submit stays in view at the bottom of the scrolled form.
    await expect(form.getByRole('button', { name: 'Submit' })).toBeInViewport();
    await expect(form).toHaveScreenshot('form-light.png', {
      mask: varying(form)
    });
  });

  test('reads in the dark theme', async ({ page }) => {
    await useDarkTheme(page);
    const form = await refusedSubmit(page);
    await expect(form).toHaveScreenshot('form-dark.png', {
      mask: varying(form)
    });
  });

  for (const theme of ['light', 'dark']) {
    test(`previews the YAML in JupyterLab's editor (${theme})`, async ({
      page
    }) => {
      if (theme === 'dark') {
        await useDarkTheme(page);
      }
      const form = await openForm(page);
      await form.getByLabel('Name', { exact: true }).fill('yaml-demo');
      await form.getByLabel('Working directory', { exact: true }).fill('');
      await form.getByLabel('Command', { exact: true }).fill('python train.py');
      await expect(form.locator('.jp-PyTorchJobForm-validity')).toHaveText(
        'Valid'
      );
      await form.getByRole('button', { name: 'Preview YAML' }).click();
      const yaml = form.locator('.jp-PyTorchJobForm-yaml');
      const editor = yaml.locator('.cm-editor');
      await expect(editor).toBeVisible();
      await expect(editor.locator('.cm-lineNumbers')).toBeVisible();
      await expect(editor.locator('.cm-content')).toContainText(
        'kind: PyTorchJob'
      );
      await expect(
        yaml.getByRole('button', { name: 'Apply YAML' })
      ).toBeInViewport();
      await expect(
        yaml.getByRole('button', { name: 'Discard edits' })
      ).toBeInViewport();
      await expect(yaml).toHaveScreenshot(`form-yaml-${theme}.png`);
    });
  }
});
