// A vitest reporter for CI's time budget: after a run it prints the slowest test files (import, then hooks and
// tests) and, with TEST_DURATIONS=<file>, writes every file's times as JSON. Used beside the default reporter:
// `vitest run --reporter=default --reporter=./test/helpers/durations-reporter.ts`.
import fs from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** One test file's times, in milliseconds. */
interface FileTimes {
  file: string;
  state: string;
  /** Importing the file and what it imports (the server's sources, for most files). */
  importMs: number;
  /** Its hooks and tests. */
  runMs: number;
}

/** Prints the slowest files of the run and writes all of them to TEST_DURATIONS when set. */
export default class DurationsReporter implements Reporter {
  private readonly files: FileTimes[] = [];

  onTestModuleEnd(module: TestModule): void {
    const d = module.diagnostic();
    this.files.push({
      file: module.relativeModuleId,
      state: module.state(),
      importMs: Math.round(d.collectDuration + d.setupDuration + d.prepareDuration),
      runMs: Math.round(d.duration),
    });
  }

  onTestRunEnd(): void {
    const rows = [...this.files].sort((a, b) => b.importMs + b.runMs - (a.importMs + a.runMs));
    const total = (k: 'importMs' | 'runMs') => rows.reduce((sum, r) => sum + r[k], 0);
    const s = (ms: number) => `${(ms / 1000).toFixed(1)}s`.padStart(7);
    const lines = rows
      .slice(0, 12)
      .map((r) => `${s(r.importMs + r.runMs)} ${s(r.importMs)} ${s(r.runMs)}  ${r.file}`);
    console.log(
      [
        '',
        `Slowest test files (of ${rows.length}; import ${s(total('importMs')).trim()} + hooks and tests ` +
          `${s(total('runMs')).trim()} summed over the workers):`,
        '  total  import    run',
        ...lines,
      ].join('\n'),
    );
    const out = process.env.TEST_DURATIONS;
    if (out) {
      fs.mkdirSync(path.dirname(out), { recursive: true });
      fs.writeFileSync(out, JSON.stringify(rows, null, 2));
    }
  }
}
