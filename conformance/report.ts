// Output of a conformance run: the per-suite table, the JSON detail, a failing test's diff, and the ratchet.
import fs from 'node:fs';
import path from 'node:path';
import type { Json } from './compare.js';
import { ROOT } from './loader.js';

/** The outcome of one test. */
export interface TestResult {
  suite: string;
  name: string;
  /** The test's operation (`expand`, `lookup`). */
  operation: string;
  /** `general`, or `tx.fhir.org` for the tx.fhir.org-mode tests of general suites (loader.TX_FHIR_ORG_TESTS). */
  group: string;
  passed: boolean;
  /** HTTP status received (0: no answer: timeout or connection error). */
  status: number;
  /** The comparison's message, or why the test could not be judged. */
  message?: string;
  ms: number;
  expected?: Json;
  /** The response after the runner's scrubbing and sorting. */
  actual?: Json;
  /** The response body as received (for --answers; not in the JSON detail). */
  text?: string;
}

/** The row a result counts in: its suite (`suite $lookup` for an operation other than $expand), or
 * `suite (tx.fhir.org mode)`. */
const rowName = (r: TestResult): string => {
  const suite = r.operation === 'expand' ? r.suite : `${r.suite} $${r.operation}`;
  return r.group === 'general' ? suite : `${suite} (${r.group} mode)`;
};

/** Passed tests by operation. */
function passedByOperation(results: TestResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) out[r.operation] = (out[r.operation] ?? 0) + (r.passed ? 1 : 0);
  return out;
}

/** Rows of suite name, passed, total, in first-seen order. */
export function perSuite(results: TestResult[]): Array<{ suite: string; passed: number; total: number }> {
  const rows = new Map<string, { suite: string; passed: number; total: number }>();
  for (const r of results) {
    const name = rowName(r);
    const row = rows.get(name) ?? { suite: name, passed: 0, total: 0 };
    row.total++;
    if (r.passed) row.passed++;
    rows.set(name, row);
  }
  return [...rows.values()];
}

/** The table printed at the end of a run. */
export function formatTable(results: TestResult[]): string {
  const rows = perSuite(results);
  const width = Math.max(5, ...rows.map((r) => r.suite.length));
  const lines = [`${'suite'.padEnd(width)}  passed/total`, `${'-'.repeat(width)}  ------------`];
  for (const r of rows) lines.push(`${r.suite.padEnd(width)}  ${`${r.passed}/${r.total}`.padStart(12)}`);
  const passed = results.filter((r) => r.passed).length;
  const general = results.filter((r) => r.group === 'general');
  lines.push(`${'-'.repeat(width)}  ------------`);
  if (general.length !== results.length) {
    const g = general.filter((r) => r.passed).length;
    lines.push(`${'general mode'.padEnd(width)}  ${`${g}/${general.length}`.padStart(12)}`);
  }
  lines.push(`${'TOTAL'.padEnd(width)}  ${`${passed}/${results.length}`.padStart(12)}`);
  return lines.join('\n');
}

/** A failing test's detail: the comparison's message, then expected and actual JSON. */
export function formatDiff(r: TestResult): string {
  return [
    `--- ${r.suite}/${r.name}: FAIL (HTTP ${r.status})`,
    r.message ?? '',
    '--- expected',
    JSON.stringify(r.expected, null, 2),
    '--- actual (scrubbed and sorted as the runner does)',
    JSON.stringify(r.actual, null, 2),
  ].join('\n');
}

export const RATCHET_FILE = path.join(ROOT, 'conformance', 'ratchet.json');

/** The recorded pass counts, by operation (none when there is no ratchet yet; a ratchet written before there was
 * more than one operation counts $expand). */
export function readRatchet(): Record<string, number> {
  if (!fs.existsSync(RATCHET_FILE)) return {};
  const r = JSON.parse(fs.readFileSync(RATCHET_FILE, 'utf8')) as {
    passed?: number;
    operations?: Record<string, number>;
  };
  return r.operations ?? { expand: r.passed ?? 0 };
}

/** Records the pass counts by operation (what --check holds), and the totals and per-suite figures for the
 * reader. */
export function writeRatchet(results: TestResult[]): void {
  const passed = results.filter((r) => r.passed).length;
  const general = results.filter((r) => r.group === 'general');
  const body = {
    passed,
    total: results.length,
    general: `${general.filter((r) => r.passed).length}/${general.length}`,
    operations: passedByOperation(results),
    suites: Object.fromEntries(perSuite(results).map((r) => [r.suite, `${r.passed}/${r.total}`])),
  };
  fs.writeFileSync(RATCHET_FILE, `${JSON.stringify(body, null, 2)}\n`);
}
