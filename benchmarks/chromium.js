/**
 * Debian's Chromium (or $CHROMIUM_PATH) through Playwright from
 * ui-tests/node_modules (never `playwright install`), and a fresh JupyterLab
 * page in it, as the browser benchmarks use them.
 */
'use strict';

const path = require('path');
const { chromium } = require(
  path.join(__dirname, '..', 'ui-tests', 'node_modules', '@playwright', 'test')
);

function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync'
    ]
  });
}

/**
 * A new page on a fresh JupyterLab workspace (no earlier tab restored), once
 * the app has started; the lab must expose `window.jupyterapp`.
 */
async function openLab(browser, base, token, workspace) {
  const page = await browser.newPage({
    viewport: { width: 1400, height: 900 }
  });
  page.on('crash', () => console.error('the page crashed'));
  page.on('pageerror', error => console.error('page error:', error.message));
  await page.goto(
    `${base}/lab/workspaces/${workspace}?reset${token ? `&token=${token}` : ''}`
  );
  await page.locator('#jupyterlab-splash').waitFor({ state: 'detached' });
  await page.waitForFunction(
    () => window.jupyterapp && window.jupyterapp.started
  );
  await page.evaluate(() => window.jupyterapp.started);
  return page;
}

module.exports = { launchChromium, openLab };
