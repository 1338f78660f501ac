#!/usr/bin/env node
/**
 * Log viewer benchmark: a real job prints 1,000,000 lines (local backend);
 * Chromium opens its logs in JupyterLab and we measure
 *
 *   - time to first paint: from the "open logs" command to the first rows on
 *     screen;
 *   - time until every line is loaded ("End of log", 1,000,000 lines);
 *   - frame times while scrolling from the top to the end (requestAnimationFrame
 *     deltas, plus the page's long tasks).
 *
 * Usage (against a running lab, e.g. `cd ui-tests && PTJOB_UI_PORT=8890 jlpm start`):
 *
 *   node benchmarks/log_viewer/run.js [--url http://localhost:8890] [--token T]
 *        [--lines 1000000] [--job NAME] [--keep] [--wrap] [--only-matching Q]
 *
 * `--wrap` opens the viewer with long lines wrapped; `--only-matching Q`
 * searches for Q once the log is in and shows only the matching lines before
 * the scroll is measured.
 *
 * Uses the Chromium at $CHROMIUM_PATH or /usr/bin/chromium, and Playwright
 * from ui-tests/node_modules (never `playwright install`).
 */
'use strict';

const { launchChromium, openLab } = require('../chromium');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

async function api({ base, token }, method, endpoint, body) {
  const headers = { 'Content-Type': 'application/json' };
  if (token) {
    headers.Authorization = `token ${token}`;
  }
  const response = await fetch(`${base}/pytorchjob/api/${endpoint}`, {
    method,
    headers,
    body: body ? JSON.stringify(body) : undefined
  });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(`${method} ${endpoint}: ${response.status} ${text}`);
  }
  return text ? JSON.parse(text) : null;
}

function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = q =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return {
    frames: values.length,
    mean: +mean.toFixed(1),
    p50: +at(0.5).toFixed(1),
    p95: +at(0.95).toFixed(1),
    p99: +at(0.99).toFixed(1),
    max: +sorted[sorted.length - 1].toFixed(1),
    over50ms: values.filter(v => v > 50).length
  };
}

/**
 * One measurement against the lab at `base`: `lines` lines (about 60 bytes
 * each), every 1/`redraws`-th of them followed by a \r redraw of itself (a
 * progress bar's update; a terminal still shows `lines` lines).
 */
async function measure({
  base,
  token = '',
  lines: LINES,
  redraws = 0,
  job,
  keep = false,
  wrap = false,
  onlyMatching = ''
}) {
  const lab = { base: base.replace(/\/$/, ''), token };
  const BASE = lab.base;
  const TOKEN = token;
  const JOB = job || `bench-logs-${Date.now().toString(36)}`;
  const every = redraws > 0 ? Math.round(1 / redraws) : 0;
  // 1. A job whose log has LINES lines (about 60 bytes each).
  const script =
    'import sys\n' +
    `w = sys.stdout.write\n` +
    `for i in range(${LINES}):\n` +
    `    w(f"step {i:>7} loss {1 / (i + 1):.6f} lr 0.001 throughput 1234.5 samples/s")\n` +
    (every
      ? `    w(f"\\rstep {i:>7} \\x1b[32mdone\\x1b[0m throughput 1234.5 samples/s" if i % ${every} == 0 else "")\n`
      : '') +
    `    w("\\n")\n`;
  const submitted = Date.now();
  await api(lab, 'POST', 'jobs', { name: JOB, script, shm: '' });
  for (;;) {
    const job = await api(lab, 'GET', `jobs/${JOB}`);
    if (job.state === 'Succeeded' || job.state === 'Failed') {
      if (job.state === 'Failed') {
        throw new Error(
          `the benchmark job failed: ${JSON.stringify(job.replicas)}`
        );
      }
      break;
    }
    await new Promise(r => setTimeout(r, 500));
  }
  console.log(
    `job ${JOB}: ${LINES} lines written in ${((Date.now() - submitted) / 1000).toFixed(1)} s`
  );

  // 2. JupyterLab in Chromium.
  const browser = await launchChromium();
  const page = await openLab(browser, BASE, TOKEN, JOB);

  // 3. Time to first paint and to the whole log.
  const timings = await page.evaluate(
    async ({ job, wrap, onlyMatching }) => {
      const longTasks = [];
      const observer = new PerformanceObserver(list => {
        for (const entry of list.getEntries()) {
          longTasks.push(entry.duration);
        }
      });
      observer.observe({ entryTypes: ['longtask'] });
      const t0 = performance.now();
      const painted = new Promise(resolve => {
        const check = () => {
          const row = document.querySelector(
            `#pytorchjob-logs-${job} .jp-PyTorchJobLogs-row`
          );
          if (row && row.textContent) {
            resolve(performance.now() - t0);
          } else {
            requestAnimationFrame(check);
          }
        };
        requestAnimationFrame(check);
      });
      void window.jupyterapp.commands.execute('pytorchjob:open-logs', {
        name: job,
        wrap,
        onlyMatching: !!onlyMatching
      });
      const firstPaint = await painted;
      const loaded = await new Promise(resolve => {
        const check = () => {
          const status = document.querySelector(
            `#pytorchjob-logs-${job} .jp-PyTorchJobLogs-status`
          );
          const text = status ? status.textContent : '';
          if (text.includes('End of log')) {
            resolve(performance.now() - t0);
          } else {
            setTimeout(check, 50);
          }
        };
        check();
      });
      observer.disconnect();
      return { firstPaint, loaded, longTasks };
    },
    { job: JOB, wrap, onlyMatching }
  );
  const viewer = page.locator(`#pytorchjob-logs-${JOB}`);
  if (onlyMatching) {
    const search = viewer.getByRole('searchbox');
    await search.fill(onlyMatching);
    await search.press('Enter');
    await viewer
      .locator('.jp-PyTorchJobLogs-status', { hasText: 'lines shown' })
      .waitFor();
  }
  const status = await viewer
    .locator('.jp-PyTorchJobLogs-status')
    .textContent();
  const domRows = await viewer.locator('.jp-PyTorchJobLogs-row').count();

  // 4. Frame times while scrolling from the top to the end: a wheel-like
  // scroll every frame (2 s from top to bottom), then a slow read of the end.
  const scroll = await page.evaluate(async job => {
    const node = document.querySelector(
      `#pytorchjob-logs-${job} .jp-PyTorchJobLogs-lines`
    );
    const longTasks = [];
    let observer = null;
    try {
      observer = new PerformanceObserver(list => {
        for (const entry of list.getEntries()) {
          longTasks.push(entry.duration);
        }
      });
      observer.observe({ entryTypes: ['longtask'] });
    } catch {
      // Not supported.
    }
    node.scrollTop = 0;
    await new Promise(r =>
      requestAnimationFrame(() => requestAnimationFrame(r))
    );
    const frames = [];
    const steps = 120;
    const range = node.scrollHeight - node.clientHeight;
    let last = performance.now();
    for (let i = 1; i <= steps; i++) {
      node.scrollTop = (range * i) / steps;
      await new Promise(r => requestAnimationFrame(r));
      const now = performance.now();
      frames.push(now - last);
      last = now;
    }
    // Then small wheel steps (3 lines) near the end, as a person reads.
    for (let i = 0; i < 60; i++) {
      node.scrollTop -= 54;
      await new Promise(r => requestAnimationFrame(r));
      const now = performance.now();
      frames.push(now - last);
      last = now;
    }
    observer?.disconnect();
    const lastRow = [...node.querySelectorAll('.jp-PyTorchJobLogs-row')].pop();
    return {
      frames,
      longTasks,
      rowsInDom: node.querySelectorAll('.jp-PyTorchJobLogs-row').length,
      lastRow: lastRow ? lastRow.textContent : ''
    };
  }, JOB);

  const report = {
    lines: LINES,
    redraws: every ? Math.ceil(LINES / every) : 0,
    firstPaintMs: Math.round(timings.firstPaint),
    allLinesLoadedMs: Math.round(timings.loaded),
    longTasksWhileLoading: timings.longTasks.length,
    longestTaskWhileLoadingMs: timings.longTasks.length
      ? Math.round(Math.max(...timings.longTasks))
      : 0,
    status,
    wrap,
    onlyMatching,
    rowsInDomAfterLoad: domRows,
    scrollFrameMs: stats(scroll.frames),
    longTasksDuringScroll: scroll.longTasks.length,
    longestTaskMs: scroll.longTasks.length
      ? Math.round(Math.max(...scroll.longTasks))
      : 0,
    rowsInDomAfterScroll: scroll.rowsInDom
  };
  await browser.close();
  if (!keep) {
    await api(lab, 'DELETE', `jobs/${JOB}`);
  }
  return report;
}

module.exports = { measure };

if (require.main === module) {
  measure({
    base: option('url', process.env.LAB_URL || 'http://localhost:8890'),
    token: option('token', process.env.LAB_TOKEN || ''),
    lines: Number(option('lines', '1000000')),
    redraws: Number(option('redraws', '0')),
    job: option('job', ''),
    keep: process.argv.includes('--keep'),
    wrap: process.argv.includes('--wrap'),
    onlyMatching: option('only-matching', '')
  })
    .then(report => console.log(JSON.stringify(report, null, 2)))
    .catch(error => {
      console.error(error);
      process.exit(1);
    });
}
