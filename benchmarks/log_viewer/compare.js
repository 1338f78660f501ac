#!/usr/bin/env node
/**
 * The log viewer benchmark (run.js) against two labs side by side - a
 * baseline (e.g. main's build) and a candidate - alternating, and their
 * medians with the candidate / baseline ratios.
 *
 *   node benchmarks/log_viewer/compare.js --baseline http://localhost:8941 \
 *        --candidate http://localhost:8942 [--lines 1000000] [--redraws 0.1] [--runs 3]
 */
'use strict';

const { measure } = require('./run');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

const median = values => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

const METRICS = {
  'first paint (ms)': r => r.firstPaintMs,
  'all lines loaded (ms)': r => r.allLinesLoadedMs,
  'longest task while loading (ms)': r => r.longestTaskWhileLoadingMs,
  'scroll frame p95 (ms)': r => r.scrollFrameMs.p95,
  'scroll frame max (ms)': r => r.scrollFrameMs.max,
  'scroll frames > 50 ms': r => r.scrollFrameMs.over50ms
};

async function main() {
  const labs = {
    baseline: option('baseline', 'http://localhost:8941'),
    candidate: option('candidate', 'http://localhost:8942')
  };
  const common = {
    lines: Number(option('lines', '1000000')),
    redraws: Number(option('redraws', '0.1'))
  };
  const runs = Number(option('runs', '3'));
  const results = { baseline: [], candidate: [] };
  for (let run = 0; run < runs; run++) {
    for (const which of ['baseline', 'candidate']) {
      const report = await measure({ base: labs[which], ...common });
      console.log(`${which} run ${run + 1}: ${report.status}`);
      results[which].push(report);
    }
  }
  console.log(
    `\n${common.lines} lines, ${common.redraws * 100}% of them redrawn with \\r; ` +
      `median of ${runs} runs each`
  );
  console.log(
    '| metric | baseline | candidate | candidate / baseline |\n| --- | --- | --- | --- |'
  );
  for (const [name, read] of Object.entries(METRICS)) {
    const base = median(results.baseline.map(read));
    const cand = median(results.candidate.map(read));
    const ratio = base > 0 ? (cand / base).toFixed(2) : '-';
    console.log(`| ${name} | ${base} | ${cand} | ${ratio} |`);
  }
  console.log(
    `| lines shown | ${results.baseline[0].status} | ${results.candidate[0].status} | |`
  );
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});
