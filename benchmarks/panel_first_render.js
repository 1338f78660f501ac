#!/usr/bin/env node
/**
 * The "PyTorch Jobs" side panel's first render, in Chromium: from showing the
 * panel (a fresh workspace, the panel hidden until then, so nothing is loaded)
 * to its list painted (every job's row, or the first page of rows and the
 * "Show more" row). Also how much of it was the `GET jobs` request
 * (the page's resource timing) and the page's long tasks meanwhile.
 *
 * Usually run by `benchmarks/panel_first_render.py`, which seeds 10 and 1,000
 * jobs and starts the lab; by hand, against a running lab whose list has N jobs:
 *
 *   node benchmarks/panel_first_render.js --url http://127.0.0.1:8890 \
 *        [--token T] --jobs N [--runs 5]
 *
 * Prints one JSON object. Uses the Chromium at $CHROMIUM_PATH or
 * /usr/bin/chromium and Playwright from ui-tests/node_modules, as
 * `benchmarks/log_viewer/run.js` does.
 */
'use strict';

const { launchChromium, openLab } = require('./chromium');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

const BASE = option('url', 'http://localhost:8890').replace(/\/$/, '');
const TOKEN = option('token', '');
const JOBS = Number(option('jobs', '1000'));
const RUNS = Number(option('runs', '5'));

/** One first render in a fresh page and workspace. */
async function firstRender(browser, run) {
  const workspace = `panel-bench-${Date.now().toString(36)}-${run}`;
  const page = await openLab(browser, BASE, TOKEN, workspace);
  await page.evaluate(() => window.jupyterapp.restored);
  // Let the lab finish its own start (file browser, other extensions): measure
  // from a page that has had no long task for a second.
  await page.evaluate(
    () =>
      new Promise(resolve => {
        let timer = setTimeout(resolve, 1000);
        const deadline = setTimeout(resolve, 20000);
        new PerformanceObserver(() => {
          clearTimeout(timer);
          timer = setTimeout(() => {
            clearTimeout(deadline);
            resolve();
          }, 1000);
        }).observe({ entryTypes: ['longtask'] });
      })
  );
  const timing = await page.evaluate(async jobs => {
    const longTasks = [];
    const observer = new PerformanceObserver(list => {
      for (const entry of list.getEntries()) {
        longTasks.push(entry.duration);
      }
    });
    observer.observe({ entryTypes: ['longtask'] });
    const t0 = performance.now();
    window.jupyterapp.shell.activateById('jp-pytorchjob-panel');
    const [shown, rows] = await new Promise(resolve => {
      const check = () => {
        const panel = document.getElementById('jp-pytorchjob-panel');
        const rows = panel.querySelectorAll('.jp-PyTorchJobPanel-item').length;
        // Every job, or the first page of them and the row that shows more.
        const more = panel.querySelector('.jp-PyTorchJobPanel-more');
        if (rows >= jobs || (rows > 0 && more)) {
          // The frame after the rows are in the DOM is the one that paints them.
          requestAnimationFrame(() => resolve([performance.now(), rows]));
        } else {
          requestAnimationFrame(check);
        }
      };
      requestAnimationFrame(check);
    });
    observer.disconnect();
    const request = performance
      .getEntriesByType('resource')
      .filter(
        e => e.startTime >= t0 && /\/pytorchjob\/api\/jobs(\?|$)/.test(e.name)
      )[0];
    return {
      total: shown - t0,
      beforeRequest: request ? request.startTime - t0 : null,
      request: request ? request.responseEnd - request.startTime : null,
      afterResponse: request ? shown - request.responseEnd : null,
      rows,
      longTasks
    };
  }, JOBS);
  await page.close();
  return timing;
}

/** `GET jobs` from Node, as a script would call it: the first, then the median. */
async function getJobs(count) {
  const headers = TOKEN ? { Authorization: `token ${TOKEN}` } : {};
  const times = [];
  let listed = 0;
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const response = await fetch(`${BASE}/pytorchjob/api/jobs`, { headers });
    const body = await response.json();
    times.push(performance.now() - t0);
    listed = body.jobs.length;
  }
  return { times, listed };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  // Cold first: the server has read no job yet.
  const api = await getJobs(10);
  if (api.listed < JOBS) {
    throw new Error(`the server lists ${api.listed} jobs, expected ${JOBS}`);
  }
  const browser = await launchChromium();
  const runs = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      runs.push(await firstRender(browser, i));
    }
  } finally {
    await browser.close();
  }
  const round = v => (v === null ? null : Math.round(v));
  console.log(
    JSON.stringify({
      jobs: api.listed,
      getJobsFirstMs: round(api.times[0]),
      getJobsMedianMs: round(median(api.times.slice(1))),
      firstRenderMedianMs: round(median(runs.map(r => r.total))),
      beforeRequestMedianMs: round(median(runs.map(r => r.beforeRequest ?? 0))),
      requestMedianMs: round(median(runs.map(r => r.request ?? 0))),
      afterResponseMedianMs: round(median(runs.map(r => r.afterResponse ?? 0))),
      longestTaskMs: round(Math.max(0, ...runs.flatMap(r => r.longTasks))),
      rowsRendered: runs[0].rows,
      runs: runs.map(r => ({
        total: round(r.total),
        beforeRequest: round(r.beforeRequest),
        request: round(r.request),
        afterResponse: round(r.afterResponse)
      }))
    })
  );
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});
