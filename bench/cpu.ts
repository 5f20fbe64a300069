// `npx tsx bench/cpu.ts [rounds] [requests]`: the server's own CPU time per request for two hot paths, a filtered
// `$expand` (filter=heart count=20 on the standard 100k code system) and a warm echo bot (text/plain), read from
// /proc/<pid>/stat around each round. CPU time rather than throughput: it hardly depends on what else the machine
// is doing, so a change can be judged on a busy machine (the throughput bench, `npm run bench`, needs a quiet one).
// The server runs from dist/ (`npm run build` first) as `npm start` runs it, on a fresh embedded database;
// BENCH_SERVER=<path to another build's main.js> measures that build instead (A/B runs at the same moment).
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CLIENT_ID, CLIENT_SECRET, freePort, ROOT } from './lib/procs.js';

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

async function send(url: string, init: RequestInit): Promise<{ status: number; text: string }> {
  const res = await fetch(url, init);
  return { status: res.status, text: await res.text() };
}

/** Sends `n` requests, CONCURRENCY at a time; throws on the first unexpected answer. */
async function load(
  n: number,
  url: string,
  init: RequestInit,
  check: (r: { status: number; text: string }) => boolean,
) {
  let next = 0;
  const worker = async () => {
    while (next++ < n) {
      const r = await send(url, init);
      if (!check(r)) throw new Error(`unexpected answer ${r.status}: ${r.text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

/** Median server CPU per request (microseconds) over the rounds, after a warm-up round. */
async function measure(
  pid: number,
  name: string,
  url: string,
  init: RequestInit,
  check: (r: { status: number; text: string }) => boolean,
) {
  await load(perRound, url, init, check);
  const perRequest: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const before = cpuMs(pid);
    await load(perRound, url, init, check);
    perRequest.push(((cpuMs(pid) - before) / perRound) * 1000);
  }
  perRequest.sort((a, b) => a - b);
  const median = perRequest[Math.floor(perRequest.length / 2)];
  console.log(
    `${name}: median ${median.toFixed(0)} us CPU/request (rounds: ${perRequest.map((v) => v.toFixed(0)).join(', ')})`,
  );
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-cpu-'));
const genDir = path.join(dataDir, 'gen');
execFileSync(process.execPath, [GENERATOR, '--out', genDir], { stdio: 'ignore' });
const port = await freePort();
const base = `http://127.0.0.1:${port}/`;
const main = process.env.BENCH_SERVER ?? path.join(ROOT, 'dist', 'main.js');
const child = spawn(process.execPath, ['--no-node-snapshot', main], {
  cwd: ROOT,
  env: {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: base,
    DATA_DIR: path.join(dataDir, 'db'),
    DATABASE_URL: undefined,
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    CLIENT_ID,
    CLIENT_SECRET,
    LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
try {
  for (let i = 0; ; i++) {
    if (i > 600) throw new Error('server not healthy');
    const ok = await fetch(`${base}healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 200));
  }
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
  const heart = `${base}fhir/R4/ValueSet/$expand?url=${encodeURIComponent(expected.vsUrl)}&filter=heart&count=20`;
  await measure(
    child.pid!,
    '$expand filter=heart count=20',
    heart,
    { headers: auth },
    (r) => r.status === 200,
  );

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
  await measure(
    child.pid!,
    'bot echo text/plain',
    `${base}fhir/R4/Bot/${botId}/$execute`,
    { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'hello' },
    (r) => r.status === 200 && r.text === 'hello',
  );
  console.log(
    `load average: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; ${os.cpus().length} cores`,
  );
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  fs.rmSync(dataDir, { recursive: true, force: true });
}
