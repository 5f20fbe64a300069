// Results: rows, goals, the printed table and the machine description.
import fs from 'node:fs';
import os from 'node:os';
import type { LoadResult } from './load.js';

/** One line of the results table. */
export interface Row {
  section: string;
  name: string;
  db: string;
  status: 'ok' | 'not available' | 'error';
  note?: string;
  load?: LoadResult;
  /** For single-request measurements (cold start): milliseconds. */
  singleMs?: number[];
  ratioNode?: number;
  ratioExpress?: number;
  /** Set when the row was measured in alternation with the Express ceiling (ratioExpress is then the paired one). */
  paired?: { ceilingRps: number; ceilingP99: number; ratios: number[] };
  /** The machine's 1-minute load average when the row was measured: other work on the machine skews numbers. */
  load1?: number;
  /** Throughput relative to another row (e.g. /auth/me vs /healthz). */
  ratioTo?: { name: string; ratio: number };
}

/** A goal from the issue, checked against the measurements (reported, never an exit code). */
export interface Goal {
  db: string;
  goal: string;
  measured: string;
  verdict: 'PASS' | 'FAIL' | 'N/A';
}

/** The machine the numbers come from. */
export interface Machine {
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  platform: string;
}

/** Describes this machine (nproc, CPU model, memory, Node version). */
export function machineInfo(): Machine {
  let cpuModel = os.cpus()[0]?.model ?? 'unknown';
  try {
    const m = /model name\s*:\s*(.+)/.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) cpuModel = m[1].trim();
  } catch {
    // not Linux: os.cpus() is good enough
  }
  return {
    nproc: os.availableParallelism(),
    cpuModel,
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
  };
}

const fmt = (n: number | undefined, digits = 0) =>
  n === undefined || Number.isNaN(n)
    ? '-'
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The results table as aligned plain text (also valid as a Markdown table). */
export function formatTable(rows: Row[]): string {
  const header = [
    'db',
    'scenario',
    'req/s',
    'x node',
    'x express',
    'p50 ms',
    'p99 ms',
    'non-2xx',
    'load1',
    'note',
  ];
  const lines = rows.map((r) => {
    const l = r.load;
    const note = [
      r.status !== 'ok' ? r.status.toUpperCase() : '',
      r.ratioTo ? `${fmt(r.ratioTo.ratio, 2)}x ${r.ratioTo.name}` : '',
      r.singleMs ? `single requests: ${r.singleMs.map((m) => fmt(m, 1)).join(', ')} ms` : '',
      r.note ?? '',
    ]
      .filter(Boolean)
      .join('; ')
      // One table line per row: server output in error notes has line breaks (the JSON keeps it all).
      .replace(/\s+/g, ' ');
    return [
      r.db,
      `${r.section}: ${r.name}`,
      fmt(l?.rps),
      fmt(r.ratioNode, 3),
      fmt(r.ratioExpress, 2),
      l ? fmt(l.p50, 2) : r.singleMs ? fmt(median(r.singleMs), 1) : '-',
      fmt(l?.p99, 2),
      l ? String(l.non2xx + l.errors) : '-',
      fmt(r.load1, 1),
      note,
    ];
  });
  return markdownTable(header, lines);
}

/** The goals as a table. */
export function formatGoals(goals: Goal[]): string {
  return markdownTable(
    ['db', 'goal', 'measured', 'verdict'],
    goals.map((g) => [g.db, g.goal, g.measured, g.verdict]),
  );
}

function markdownTable(header: string[], lines: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const row = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [row(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(row)].join('\n');
}

/** Median of a list of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
}

export { fmt };
