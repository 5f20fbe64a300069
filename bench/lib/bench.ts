// The run's state: the plan, the ceilings, and the rows collected so far.
import os from 'node:os';
import { measure, measurePaired, type LoadPlan, type LoadResult, type LoadSpec } from './load.js';
import type { Goal, Row } from './report.js';

/** Collects rows for one database and computes ratios to the ceilings. */
export class Bench {
  rows: Row[] = [];
  goals: Goal[] = [];
  constructor(
    readonly plan: LoadPlan,
    readonly connections: number,
    public ceilings: { node?: number; express?: number },
    public db = '-',
  ) {}

  /** A bare Express server kept running through the run, for scenarios measured in alternation with it. */
  expressCeilingUrl?: string;

  /** Like `load`, but each timed run follows a run of the bare Express ceiling (see measurePaired); the row's
   * `x express` is the median of the per-pair ratios. Without a running ceiling it is `load`. */
  async loadPaired(
    section: string,
    name: string,
    spec: Omit<LoadSpec, 'connections'> & { connections?: number },
  ): Promise<Row> {
    const ceilingUrl = this.expressCeilingUrl;
    if (!ceilingUrl) return this.load(section, name, spec);
    return this.record(section, name, ' (paired with Express)', async () => {
      const p = await measurePaired(
        { connections: this.connections, ...spec },
        { url: ceilingUrl, connections: spec.connections ?? this.connections },
        this.plan,
      );
      const note =
        `x express paired: Express ${Math.round(p.ceiling.rps)} req/s in alternating runs, ratios ` +
        p.ratios.map((r) => r.toFixed(2)).join('/');
      const row = this.loadRow(section, name, p.scenario, note);
      row.ratioExpress = p.ratio;
      row.paired = { ceilingRps: p.ceiling.rps, ceilingP99: p.ceiling.p99, ratios: p.ratios };
      return { row, progress: `, Express ${Math.round(p.ceiling.rps)} req/s, ratio ${p.ratio.toFixed(2)}` };
    });
  }

  /** Measures one load scenario and records it; a failure to run is recorded as an error row. */
  async load(
    section: string,
    name: string,
    spec: Omit<LoadSpec, 'connections'> & { connections?: number },
    note?: string,
  ): Promise<Row> {
    return this.record(section, name, '', async () => {
      const load = await measure({ connections: this.connections, ...spec }, this.plan);
      return { row: this.loadRow(section, name, load, note) };
    });
  }

  /** A measured row: status and note say when responses were not 2xx. */
  private loadRow(section: string, name: string, load: LoadResult, note?: string): Row {
    const row: Row = { section, name, db: this.db, status: 'ok', load, note, ...this.ratios(load) };
    const bad = load.non2xx + load.errors;
    if (load.ok === 0) {
      row.status = 'error';
      row.note = [note, `no 2xx responses: ${JSON.stringify(load.statusCodes)}`].filter(Boolean).join('; ');
    } else if (bad > 0) {
      row.note = [note, `statuses ${JSON.stringify(load.statusCodes)}`].filter(Boolean).join('; ');
    }
    return row;
  }

  /** Runs a measurement with progress on stderr and records its row (an error row when it could not run). */
  private async record(
    section: string,
    name: string,
    labelSuffix: string,
    run: () => Promise<{ row: Row; progress?: string }>,
  ): Promise<Row> {
    process.stderr.write(`  ${this.db} ${section}: ${name}${labelSuffix} ...`);
    const load1 = os.loadavg()[0];
    let row: Row;
    try {
      const r = await run();
      row = { ...r.row, load1 };
      const load = row.load!;
      process.stderr.write(
        ` ${Math.round(load.rps)} req/s p50 ${load.p50.toFixed(2)} p99 ${load.p99.toFixed(2)} ms${r.progress ?? ''}\n`,
      );
    } catch (err) {
      row = {
        section,
        name,
        db: this.db,
        status: 'error',
        note: String((err as Error).message ?? err),
        load1,
      };
      process.stderr.write(` error: ${row.note}\n`);
    }
    this.rows.push(row);
    return row;
  }

  /** Records a scenario whose capability is not in the server (yet). */
  unavailable(section: string, name: string, why: string): Row {
    const row: Row = { section, name, db: this.db, status: 'not available', note: why };
    process.stderr.write(`  ${this.db} ${section}: ${name}: not available (${why})\n`);
    this.rows.push(row);
    return row;
  }

  /** Records a row measured by hand (single requests, errors). */
  add(row: Omit<Row, 'db'>): Row {
    const full = { load1: os.loadavg()[0], ...row, db: this.db };
    this.rows.push(full);
    return full;
  }

  /** Adds a goal verdict. */
  goal(goal: string, measured: string, verdict: Goal['verdict']): void {
    this.goals.push({ db: this.db, goal, measured, verdict });
  }

  private ratios(load: LoadResult): Pick<Row, 'ratioNode' | 'ratioExpress'> {
    return {
      ratioNode: this.ceilings.node ? load.rps / this.ceilings.node : undefined,
      ratioExpress: this.ceilings.express ? load.rps / this.ceilings.express : undefined,
    };
  }
}
