// Sums the unit (vitest JSON), cluster (e2e/bench/cluster-checks.ts) and e2e (Playwright JSON)
// reports into one plain line:
// "N passed, N failed". A report that is missing counts as one failure: its stage never ran.
import { existsSync, readFileSync } from 'node:fs';

let passed = 0;
let failed = 0;
let skipped = 0;

function read(path, stage) {
  if (!existsSync(path)) {
    console.log(`${stage}: no report at ${path} (the stage did not run)`);
    failed += 1;
    return null;
  }
  return JSON.parse(readFileSync(path, 'utf8'));
}

const unit = read('test-results/unit.json', 'unit');
if (unit) {
  passed += unit.numPassedTests;
  failed += unit.numFailedTests;
  skipped += unit.numPendingTests + (unit.numTodoTests ?? 0);
  if (unit.numTotalTests === 0) failed += 1;
}

const cluster = read('test-results/cluster.json', 'cluster');
if (cluster) {
  passed += cluster.passed;
  failed += cluster.failed;
  if (cluster.passed + cluster.failed === 0) failed += 1;
}

const e2e = read('test-results/e2e.json', 'e2e');
if (e2e) {
  const s = e2e.stats;
  passed += s.expected + s.flaky;
  failed += s.unexpected;
  skipped += s.skipped;
  if (s.expected + s.unexpected + s.flaky === 0) failed += 1;
}

console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
if (failed > 0) process.exitCode = 1;
