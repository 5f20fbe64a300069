// `npm run bench [-- --quick]`: ceilings, then the FHIR server (embedded database, and PostgreSQL when
// BENCH_DATABASE_URL is set) under load; prints a table and writes bench/results/latest.json.
// Exits 0 whatever the numbers are; non-zero only when the benchmark could not run at all.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Bench } from './lib/bench.js';
import { describe, graphqlRequest, request, signIn } from './lib/client.js';
import type { LoadPlan } from './lib/load.js';
import { freshDataDir, ROOT, startCeiling, startFhirServer, type Proc, type ServerDb } from './lib/procs.js';
import { fmt, formatGoals, formatTable, machineInfo, type Goal, type Row } from './lib/report.js';
import { botScenarios } from './scenarios/bots.js';
import { expandScenarios } from './scenarios/expand.js';
import { terminologyOpsScenarios } from './scenarios/terminology-ops.js';
import { validationScenario } from './scenarios/validation.js';
import { expand1mScenario, vocabulary } from './scenarios/expand1m.js';
import { revocationUnderLoad, type RevocationResult } from './scenarios/revocation.js';
import { generateRelease, snomedScenario } from './scenarios/snomed.js';

const quick = process.argv.includes('--quick');
const onlyArg = process.argv.find((a) => a.startsWith('--only='));
/** `--only=auth,revocation,expand,termops,bots,writes` runs a subset (for working on one scenario); default: all. */
const only = onlyArg ? new Set(onlyArg.slice('--only='.length).split(',')) : undefined;
const want = (section: string) => !only || only.has(section);
/** The 1M-concept scenario (minutes: generation, import, restarts) runs only when asked: `--1m` or `--only=expand1m`. */
const want1m = process.argv.includes('--1m') || only?.has('expand1m') === true;
/** SNOMED CT at release scale (issues 25, 26: generation, import, restart; minutes): `--snomed` or `--only=snomed`. */
const wantSnomed = process.argv.includes('--snomed') || only?.has('snomed') === true;
const needServer = !only || [...only].some((s) => s !== 'expand1m' && s !== 'snomed');
const CONNECTIONS = 16;
const plan: LoadPlan = quick
  ? { warmupSec: 0.4, durationSec: 0.8, repeats: 3 }
  : { warmupSec: 2, durationSec: 5, repeats: 3 };
// The standard data generator lives in the shared folder beside the repository (../shared, or SHARED_DIR as for
// the tests), or BENCH_GENERATOR names it.
const GENERATOR =
  process.env.BENCH_GENERATOR ??
  path.join(process.env.SHARED_DIR ?? path.resolve(ROOT, '../shared'), 'bench/gen-codesystem.mjs');

const ME_FULL = `query {
  me {
    loginId clientId
    user { id email firstName lastName }
    project { id name }
    membership { id admin }
    sessions { id userAgent remoteAddress browser os authMethod createdAt lastUsed current }
  }
}`;
const ME_MIN = 'query { me { loginId } }';

/** Measures both ceilings; returns the Express ceiling still running (for paired measurements). */
async function ceilings(bench: Bench): Promise<Proc | undefined> {
  bench.db = '-';
  let express: Proc | undefined;
  for (const kind of ['node-http', 'express'] as const) {
    const proc = await startCeiling(kind);
    try {
      const row = await bench.load('ceiling', kind === 'node-http' ? 'bare node:http' : 'bare Express', {
        url: `${proc.base}healthz`,
      });
      if (row.load) bench.ceilings[kind === 'node-http' ? 'node' : 'express'] = row.load.rps;
      if (kind === 'express' && row.load) {
        express = proc;
        bench.expressCeilingUrl = `${proc.base}healthz`;
      }
    } finally {
      if (proc !== express) await proc.stop();
    }
  }
  // Ratios for the ceiling rows themselves, now that both are known.
  for (const r of bench.rows) {
    if (!r.load) continue;
    r.ratioNode = bench.ceilings.node ? r.load.rps / bench.ceilings.node : undefined;
    r.ratioExpress = bench.ceilings.express ? r.load.rps / bench.ceilings.express : undefined;
  }
  return express;
}

async function authScenarios(bench: Bench, server: Proc, token: string): Promise<void> {
  const healthz = await bench.load('framework', 'GET /healthz (no auth)', { url: `${server.base}healthz` });
  const auth = { authorization: `Bearer ${token}` };
  const relToHealthz = (r: Row) => {
    if (r.load && healthz.load) r.ratioTo = { name: '/healthz', ratio: r.load.rps / healthz.load.rps };
  };
  const me = await bench.load('auth', 'GET /auth/me (REST)', { url: `${server.base}auth/me`, headers: auth });
  relToHealthz(me);

  const gql = (query: string) => ({
    url: `${server.base}graphql`,
    method: 'POST' as const,
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  const full = await bench.load('auth', 'POST /graphql me{...same fields as /auth/me}', gql(ME_FULL));
  if (full.load && me.load) full.ratioTo = { name: 'REST /auth/me', ratio: full.load.rps / me.load.rps };
  const min = await bench.load('auth', 'POST /graphql { me { loginId } } (cheap authed)', gql(ME_MIN));
  relToHealthz(min);
  // The same GraphQL round trip without a token: the difference to the row above is the per-request auth cost.
  const anon = await bench.load('auth', 'POST /graphql { __typename } (no auth)', {
    url: `${server.base}graphql`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __typename }' }),
  });
  relToHealthz(anon);
  if (min.load && anon.load) {
    const d = min.load.p50 - anon.load.p50;
    // Under a loaded machine the difference can come out negative: then it is below the noise.
    min.note = d > 0 ? `auth adds ${fmt(d, 2)} ms p50 over { __typename }` : 'auth cost below the noise here';
  }

  // A cheap authenticated REST call: an empty FHIR search (session check + one small query).
  const path = 'fhir/R4/ValueSet?url=http%3A%2F%2Fexample.org%2Fbench%2Fnone';
  const probe = await request(server.base, 'GET', path, { token });
  if (probe.status !== 200) {
    bench.unavailable('auth', 'GET /fhir/R4/ValueSet?url=<none> (cheap authed REST)', describe(probe));
  } else {
    const r = await bench.load('auth', 'GET /fhir/R4/ValueSet?url=<none> (cheap authed REST)', {
      url: `${server.base}${path}`,
      headers: auth,
    });
    relToHealthz(r);
  }
}

function revocationRow(bench: Bench, name: string, r: RevocationResult): void {
  bench.add({
    section: 'revocation',
    name,
    status: 'ok',
    note:
      `${r.successesAfterRevoke} x 200 after revoke returned (goal 0); ${r.inFlightSuccesses} x 200 sent while revoke in flight; ` +
      `${r.requests} requests by ${r.loops} loops (${fmt(r.rpsBefore)} req/s before), revoke took ${fmt(r.revokeMs, 1)} ms; ` +
      `statuses ${JSON.stringify(r.statusCounts)}; last 200 sent at ${fmt(r.lastOkSentMs, 1)} ms, ` +
      `first 401 sent at ${fmt(r.first401SentMs, 1)} ms (relative to sending the revoke)` +
      (r.otherAfterRevoke ? `; ${r.otherAfterRevoke} neither 200 nor 401 after revoke` : ''),
  });
  bench.goal(
    `revocation (${name}): zero successes after revoke`,
    `${r.successesAfterRevoke} of ${r.requests} (${r.otherAfterRevoke} other non-401)`,
    r.successesAfterRevoke === 0 ? 'PASS' : 'FAIL',
  );
}

function revocationError(bench: Bench, name: string, err: unknown): void {
  bench.add({ section: 'revocation', name, status: 'error', note: String(err) });
  bench.goal(`revocation (${name}): zero successes after revoke`, `could not run: ${String(err)}`, 'N/A');
}

async function revocationScenarios(bench: Bench, a: Proc, db: ServerDb): Promise<void> {
  const load = { loopsPerInstance: 8, beforeMs: quick ? 500 : 1500, afterMs: quick ? 500 : 1500 };
  try {
    revocationRow(bench, 'one instance', await revocationUnderLoad(a, [a], load));
  } catch (err) {
    revocationError(bench, 'one instance', err);
  }
  if (db.kind !== 'postgres') {
    bench.unavailable(
      'revocation',
      'two instances (revoke on A, load on A+B)',
      'needs BENCH_DATABASE_URL (PostgreSQL)',
    );
    return;
  }
  let b: Proc | undefined;
  try {
    // B plays a second instance behind the same public address: same BASE_URL (the tokens' issuer).
    b = await startFhirServer('B', db, { LOAD_CORE_TERMINOLOGY: 'false', BASE_URL: a.base });
    revocationRow(
      bench,
      'two instances (revoke on A, load on A+B)',
      await revocationUnderLoad(a, [a, b], load),
    );
  } catch (err) {
    revocationError(bench, 'two instances (revoke on A, load on A+B)', err);
  } finally {
    await b?.stop();
  }
}

async function runDatabase(
  bench: Bench,
  db: ServerDb,
  dataDir: string,
  info: Record<string, unknown>,
): Promise<void> {
  bench.db = db.kind;
  process.stderr.write(`\n== ${db.kind} ==\n`);
  let server: Proc;
  try {
    server = await startFhirServer('A', db);
  } catch (err) {
    // The first and last lines of the server's output name the problem; the middle is a stack.
    const lines = String(err)
      .split('\n')
      .filter((l) => l.trim() && !/^\s+at /.test(l));
    bench.add({
      section: 'server',
      name: 'start',
      status: 'error',
      note: lines.slice(0, 8).join(' / ').slice(0, 600),
    });
    throw err;
  }
  await startRows(bench, server, 'start (empty database)', info);
  try {
    const session = await signIn(server.base);
    // Each section's peak so far (VmHWM only rises): which one sets the run's peak.
    const peaks: string[] = [];
    const section = async (name: string, run: () => Promise<void>) => {
      if (!want(name)) return;
      await run();
      peaks.push(`${name} ${server.peakRssMiB() ?? '?'}`);
    };
    await section('auth', () => authScenarios(bench, server, session.accessToken));
    await section('revocation', () => revocationScenarios(bench, server, db));
    await section('expand', () => expandScenarios(bench, server, session.accessToken, dataDir));
    await section('termops', () => terminologyOpsScenarios(bench, server, session.accessToken, dataDir));
    await section('bots', () => botScenarios(bench, server, session.accessToken));
    // A last check that the server survived the run.
    const me = await graphqlRequest(server.base, session.accessToken, ME_MIN);
    if (me.status !== 200)
      bench.add({ section: 'server', name: 'alive after run', status: 'error', note: describe(me) });
    info[`${db.kind}RssAtEndMiB`] = server.rssMiB();
    const peak = server.peakRssMiB();
    info[`${db.kind}PeakRssMiB`] = peak;
    bench.add({
      section: 'server',
      name: 'peak RSS during the run (VmHWM)',
      status: 'ok',
      note: `${peak} MiB (goal < ${GOAL_LOAD_RSS_MIB} MiB under the quick bench's load); after each section: ${peaks.join(', ')} MiB`,
    });
    if (peak !== undefined)
      bench.goal(
        `peak RSS during the run < ${GOAL_LOAD_RSS_MIB} MiB`,
        `${peak} MiB`,
        peak < GOAL_LOAD_RSS_MIB ? 'PASS' : 'FAIL',
      );
  } finally {
    const code = await server.stop();
    if (code !== 0)
      bench.add({ section: 'server', name: 'SIGTERM exit', status: 'error', note: `exit code ${code}` });
  }
  // A restart on the data the run left (the embedded directory, or the same PostgreSQL schema).
  const again = await startFhirServer('A (restart)', db);
  try {
    await startRows(bench, again, 'restart (existing database)', info);
  } finally {
    await again.stop();
  }
}

/** Goals of issue 27: to /healthz 200 on an empty database, on a restart, and RSS 5 s after the start. */
const GOAL_START_MS = 3_000;
const GOAL_RESTART_MS = 1_500;
const GOAL_START_RSS_MIB = 250;
const GOAL_LOAD_RSS_MIB = 400;

/** Rows and goals of one start: milliseconds to /healthz 200 and RSS 5 s later (the server settles meanwhile). */
async function startRows(
  bench: Bench,
  server: Proc,
  what: string,
  info: Record<string, unknown>,
): Promise<void> {
  const restart = what.startsWith('restart');
  const ms = server.startMs ?? NaN;
  await new Promise((r) => setTimeout(r, 5_000));
  const rss = server.rssMiB();
  const key = restart ? 'Restart' : 'Start';
  info[`${bench.db}${key}Ms`] = Math.round(ms);
  info[`${bench.db}RssAfter${key}MiB`] = rss;
  const goalMs = restart ? GOAL_RESTART_MS : GOAL_START_MS;
  bench.add({
    section: 'server',
    name: `${what} until /healthz 200`,
    status: 'ok',
    singleMs: [ms],
    note: `goal < ${goalMs} ms; RSS ${rss} MiB 5 s later (goal < ${GOAL_START_RSS_MIB} MiB); load ${os.loadavg()[0].toFixed(1)}`,
  });
  bench.goal(`${what}: /healthz 200 < ${goalMs} ms`, `${Math.round(ms)} ms`, ms < goalMs ? 'PASS' : 'FAIL');
  if (rss !== undefined)
    bench.goal(
      `${what}: RSS 5 s after < ${GOAL_START_RSS_MIB} MiB`,
      `${rss} MiB`,
      rss < GOAL_START_RSS_MIB ? 'PASS' : 'FAIL',
    );
}

async function main(): Promise<void> {
  const started = new Date();
  const loadAtStart = os.loadavg()[0];
  const machine = machineInfo();
  process.stderr.write(
    `bench ${quick ? '--quick' : '(full)'}: ${machine.nproc} CPU ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}\n` +
      `plan: warm-up ${plan.warmupSec}s, ${plan.repeats} x ${plan.durationSec}s per scenario, ${CONNECTIONS} connections, median run reported\n`,
  );
  const bench = new Bench(plan, CONNECTIONS, {});
  const expressCeiling = await ceilings(bench);

  // The standard synthetic data, generated once per run with the shared generator, unchanged.
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-cs-'));
  const gen = spawnSync(process.execPath, [GENERATOR, '--out', dataDir], { encoding: 'utf8' });
  if (gen.status !== 0) throw new Error(`generator failed: ${gen.stderr}`);

  const info: Record<string, unknown> = {};
  // In this process, once: it does not depend on the database.
  if (want('writes')) await validationScenario(bench, dataDir);
  const dbs: ServerDb[] = [{ kind: 'pglite', dataDir: freshDataDir() }];
  const pgUrl = process.env.BENCH_DATABASE_URL;
  if (pgUrl)
    dbs.push({
      kind: 'postgres',
      databaseUrl: pgUrl,
      schema: `bench_${crypto.randomBytes(5).toString('hex')}`,
    });
  let ranOne = false;
  // 1,000,000 concepts (issue 14): 1000 parents x 999 children, the same generator.
  let data1m: string | undefined;
  let words: string[] = [];
  if (want1m) {
    data1m = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-cs1m-'));
    process.stderr.write('generating 1M concepts ...\n');
    const g = spawnSync(process.execPath, [GENERATOR, '--out', data1m, '--parents', '1000'], {
      encoding: 'utf8',
    });
    if (g.status !== 0) throw new Error(`generator (1M) failed: ${g.stderr}`);
    words = vocabulary(data1m);
  }
  let release: string | undefined;
  if (wantSnomed) {
    release = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-rf2-'));
    process.stderr.write('generating a SNOMED CT release of the International Edition size ...\n');
    generateRelease(release);
  }
  for (const db of dbs) {
    try {
      if (needServer) await runDatabase(bench, db, dataDir, info);
      if (release) {
        bench.db = db.kind;
        const dbSct: ServerDb =
          db.kind === 'postgres'
            ? { ...db, schema: `benchsct_${crypto.randomBytes(5).toString('hex')}` }
            : db;
        try {
          await snomedScenario(bench, dbSct, release);
        } finally {
          if (dbSct.kind === 'postgres' && dbSct.schema) await dropSchema(dbSct.databaseUrl!, dbSct.schema);
        }
      }
      if (data1m) {
        bench.db = db.kind;
        const db1m: ServerDb =
          db.kind === 'postgres' ? { ...db, schema: `bench1m_${crypto.randomBytes(5).toString('hex')}` } : db;
        try {
          await expand1mScenario(bench, db1m, data1m, words);
        } finally {
          if (db1m.kind === 'postgres' && db1m.schema) await dropSchema(db1m.databaseUrl!, db1m.schema);
        }
      }
      ranOne = true;
    } catch (err) {
      process.stderr.write(`${db.kind}: could not run: ${String(err)}\n`);
    } finally {
      if (db.dataDir) fs.rmSync(db.dataDir, { recursive: true, force: true });
      if (db.kind === 'postgres' && db.schema) await dropSchema(db.databaseUrl!, db.schema);
    }
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
  if (data1m) fs.rmSync(data1m, { recursive: true, force: true });
  if (release) fs.rmSync(release, { recursive: true, force: true });
  await expressCeiling?.stop();

  const table = formatTable(bench.rows);
  const goals = formatGoals(bench.goals);
  const ceilingsLine =
    `ceilings: node:http ${fmt(bench.ceilings.node)} req/s, Express ${fmt(bench.ceilings.express)} req/s at the start ` +
    '(rows noted "paired" are measured in alternation with Express and compared with those runs); ' +
    `load average at start ${fmt(loadAtStart, 1)}, at end ${fmt(os.loadavg()[0], 1)} on ${machine.nproc} CPUs ` +
    '(load1 column: a load above the CPU count means other work shared the machine)';
  process.stdout.write(`\n${ceilingsLine}\n\n${table}\n\nGoals (reported, not enforced):\n${goals}\n`);

  const resultsDir = path.join(ROOT, 'bench', 'results');
  fs.mkdirSync(resultsDir, { recursive: true });
  const out = {
    startedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    machine,
    plan: { ...plan, connections: CONNECTIONS },
    ceilings: bench.ceilings,
    info,
    loadAverage: { start: loadAtStart, end: os.loadavg()[0] },
    rows: bench.rows,
    goals: bench.goals satisfies Goal[],
    table,
    goalsTable: goals,
  };
  const json = JSON.stringify(out, null, 2);
  fs.writeFileSync(path.join(resultsDir, 'latest.json'), json);
  fs.writeFileSync(
    path.join(resultsDir, `${started.toISOString().replace(/[:.]/g, '-')}-${out.mode}.json`),
    json,
  );
  process.stdout.write(`\nwritten: bench/results/latest.json\n`);
  if (!ranOne) process.exitCode = 1;
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  try {
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } catch (err) {
    process.stderr.write(`could not drop schema ${schema}: ${String(err)}\n`);
  } finally {
    await c.end().catch(() => undefined);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `bench could not run: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
