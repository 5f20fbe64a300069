// `npx tsx bench/cpu.ts [rounds] [requests]`: the server's own CPU time per request for two hot paths, a filtered
// `$expand` (filter=heart count=20 on the standard 100k code system) and a warm echo bot (text/plain), read from
// /proc/<pid>/stat around each round. CPU time rather than throughput, so a change can be judged on a busy machine
// (the throughput bench, `npm run bench`, needs a quiet one). The server runs from dist/ (`npm run build` first)
// as `npm start` runs it, on a fresh embedded database.
//
// BENCH_SERVER=<a build's main.js> measures that build instead of this checkout's dist/.
// BENCH_COMPARE=<another build's main.js> runs that build beside this one and sends every round's requests to both,
// interleaved (each client sends to one, then the other), so both see the same moments of the machine's load: the
// CPU time of a busy machine varies by tens of percent from minute to minute, the ratio of the two far less.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLIENT_ID, CLIENT_SECRET, ROOT, startFhirServer, type Proc } from './lib/procs.js';

const rounds = Number(process.argv[2] ?? 7);
const perRound = Number(process.argv[3] ?? 3000);
const CONCURRENCY = 8;
const GENERATOR = process.env.BENCH_GENERATOR ?? path.resolve(ROOT, '../shared/bench/gen-codesystem.mjs');
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/** User + system CPU time of a process so far, in ms. */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name: state is field 3; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

type Answer = { status: number; text: string };

async function send(url: string, init: RequestInit): Promise<Answer> {
  const res = await fetch(url, init);
  return { status: res.status, text: await res.text() };
}

/** One request to measure, per server. */
interface Target {
  pid: number;
  url: string;
  init: RequestInit;
}

/** Sends `n` requests to every target, CONCURRENCY clients each sending to one target after the other. */
async function load(n: number, targets: Target[], check: (r: Answer) => boolean): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next++ < n) {
      for (const t of targets) {
        const r = await send(t.url, t.init);
        if (!check(r)) throw new Error(`unexpected answer ${r.status}: ${r.text.slice(0, 200)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

/** Median server CPU per request (microseconds) over the rounds, after a warm-up round, for each target. */
async function measure(name: string, targets: Target[], check: (r: Answer) => boolean): Promise<void> {
  await load(perRound, targets, check);
  const perRequest: number[][] = targets.map(() => []);
  for (let i = 0; i < rounds; i++) {
    const before = targets.map((t) => cpuMs(t.pid));
    await load(perRound, targets, check);
    targets.forEach((t, k) => perRequest[k].push(((cpuMs(t.pid) - before[k]) / perRound) * 1000));
  }
  const label = (k: number) => (targets.length > 1 ? (k === 0 ? ' [this build]' : ' [BENCH_COMPARE]') : '');
  perRequest.forEach((v, k) =>
    console.log(
      `${name}${label(k)}: median ${median(v).toFixed(0)} us CPU/request (rounds: ${v.map((x) => x.toFixed(0)).join(', ')})`,
    ),
  );
  if (targets.length > 1) {
    const ratios = perRequest[0].map((v, i) => v / perRequest[1][i]);
    console.log(
      `${name}: this build / BENCH_COMPARE, median of the rounds' ratios ${median(ratios).toFixed(3)}`,
    );
  }
}

/** Signs in, loads the 100k code system and a bot; returns the two requests to measure. */
async function prepare(server: Proc, genDir: string): Promise<{ expand: Target; bot: Target }> {
  const base = server.base;
  const tokenRes = await fetch(`${base}oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    }),
  });
  const token = ((await tokenRes.json()) as { access_token: string }).access_token;
  const auth = { authorization: `Bearer ${token}` };
  const fhirJson = { ...auth, 'content-type': 'application/fhir+json' };
  for (const file of ['CodeSystem-synthetic-bench.json', 'ValueSet-synthetic-bench-all.json']) {
    const type = file.split('-')[0];
    const r = await send(`${base}fhir/R4/${type}`, {
      method: 'POST',
      headers: fhirJson,
      body: fs.readFileSync(path.join(genDir, file), 'utf8'),
    });
    if (r.status !== 201) throw new Error(`POST ${type}: ${r.status} ${r.text.slice(0, 200)}`);
  }
  const expected = JSON.parse(fs.readFileSync(path.join(genDir, 'expected.json'), 'utf8')) as {
    vsUrl: string;
  };
  const bot = await send(`${base}fhir/R4/Bot`, {
    method: 'POST',
    headers: fhirJson,
    body: JSON.stringify({
      resourceType: 'Bot',
      name: 'cpu-echo',
      code: 'export async function handler(medplum, event) { return event.input; }',
    }),
  });
  const botId = (JSON.parse(bot.text) as { id: string }).id;
  return {
    expand: {
      pid: server.pid,
      url: `${base}fhir/R4/ValueSet/$expand?url=${encodeURIComponent(expected.vsUrl)}&filter=heart&count=20`,
      init: { headers: auth },
    },
    bot: {
      pid: server.pid,
      url: `${base}fhir/R4/Bot/${botId}/$execute`,
      init: { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'hello' },
    },
  };
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-cpu-'));
const genDir = path.join(dataDir, 'gen');
execFileSync(process.execPath, [GENERATOR, '--out', genDir], { stdio: 'ignore' });
const servers: Proc[] = [];
try {
  servers.push(
    await startFhirServer(
      'cpu',
      { kind: 'pglite', dataDir: path.join(dataDir, 'a') },
      {},
      process.env.BENCH_SERVER,
    ),
  );
  const compare = process.env.BENCH_COMPARE;
  if (compare)
    servers.push(
      await startFhirServer('cpu-compare', { kind: 'pglite', dataDir: path.join(dataDir, 'b') }, {}, compare),
    );
  const targets = [];
  for (const s of servers) targets.push(await prepare(s, genDir));
  await measure(
    '$expand filter=heart count=20',
    targets.map((t) => t.expand),
    (r) => r.status === 200,
  );
  await measure(
    'bot echo text/plain',
    targets.map((t) => t.bot),
    (r) => r.status === 200 && r.text === 'hello',
  );
  console.log(
    `load average: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; ${os.cpus().length} cores`,
  );
} finally {
  for (const s of servers) await s.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
