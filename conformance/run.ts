// `npm run conformance [-- --only <suite|test>] [--json [file]] [--check] [--record] [--stored]`: replays the general-mode
// `expand`, `lookup`, `validate-code`, `cs-validate-code`, `metadata` and `term-caps` tests of the HL7 terminology ecosystem suite against a server started for the run (a separate process on
// a fresh temporary embedded database), judged by the official runner's comparison.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startServerProcess, type ServerProcess } from '../test/helpers/processes.js';
import { signIn } from '../test/helpers/server.js';
import { storeSetup, type StoredSuite } from './stored.js';
import { compareJson, type Json } from './compare.js';
import { loadTests, OPERATIONS, READS, ROOT, type ConformanceTest } from './loader.js';
import { normalizeCapabilities, normalizeResponse } from './normalize.js';
import { fromR4 } from './r4.js';
import { formatDiff, formatTable, readRatchet, writeRatchet, type TestResult } from './report.js';

/** Per-request time limit: a request that takes longer counts as failed and the server is restarted. */
const REQUEST_TIMEOUT_MS = Number(process.env.CONFORMANCE_TIMEOUT_MS ?? 10_000);

interface Args {
  only?: string;
  json?: string;
  check: boolean;
  record: boolean;
  /** Each suite's setup stored through the REST API in a project of its own, instead of sent as tx-resource. */
  stored: boolean;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { check: false, record: false, stored: false };
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i];
    if (x === '--only') a.only = argv[++i];
    else if (x === '--json')
      a.json =
        argv[i + 1] && !argv[i + 1].startsWith('--')
          ? argv[++i]
          : path.join(ROOT, '.tmp', 'conformance.json');
    else if (x === '--check') a.check = true;
    else if (x === '--record') a.record = true;
    else if (x === '--stored') a.stored = true;
    else
      throw new Error(
        `Unknown argument ${x} (use --only <suite|test>, --json [file], --check, --record, --stored)`,
      );
  }
  return a;
}

interface Started {
  server: ServerProcess;
  token: string;
}

/** The server under test. Its embedded database lives in one temporary folder for the whole run, so a restart
 * after a frozen request skips migrations and the core load (~15 s instead of ~45 s on a loaded machine); every
 * test brings its own resources (tx-resource), so nothing a killed server left behind matters. */
class Target {
  current?: Started;
  private readonly dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-'));

  async start(): Promise<void> {
    // The core definitions are loaded, as on any real terminology server (a few tests use FHIR's own systems).
    // The server runs with its default limits: `big-echo-no-limit` asks for a 1,000-entry limit with its
    // X-TOO-COSTLY-THRESHOLD header, which the runner sends as the official one does.
    const server = await startServerProcess({
      dataDir: this.dataDir,
      env: { LOAD_CORE_TERMINOLOGY: 'true' },
      timeoutMs: 180_000,
    });
    this.current = { server, token: (await signIn(server.base)).access_token };
  }

  /** Kills the (frozen) server at once and starts another on the same database. */
  async restart(): Promise<void> {
    await this.current?.server.stop(0);
    await this.start();
  }

  async stop(): Promise<void> {
    await this.current?.server.stop(5_000);
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** One request over node:http, with exactly the headers given: `fetch` adds `Accept-Language: *`, which the
 * official runner never sends unless a test sets a language (a server may read it as displayLanguage=*). */
function request(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const all =
      body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    const req = http.request(url, { method, headers: all, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { name: 'TimeoutError' })));
    req.on('error', reject);
    req.end(body);
  });
}

async function runTest(target: Target, t: ConformanceTest, stored?: StoredSuite): Promise<TestResult> {
  const started = Date.now();
  const base = {
    suite: t.suite,
    name: t.name,
    expected: t.expected,
    operation: t.operation,
    group: t.modes.has('tx.fhir.org') ? 'tx.fhir.org' : 'general',
  };
  if (stored?.error)
    return { ...base, passed: false, status: 0, ms: 0, message: `Setup refused: ${stored.error}` };
  const headers: Record<string, string> = {
    authorization: `Bearer ${stored?.token ?? target.current!.token}`,
    'content-type': 'application/fhir+json',
    accept: 'application/fhir+json',
  };
  if (t.acceptLanguage) headers['accept-language'] = t.acceptLanguage;
  for (const [name, value] of Object.entries(t.headers)) headers[name.toLowerCase()] = value;
  let status = 0;
  let text: string;
  try {
    const url = `${target.current!.server.base}fhir/R4/${OPERATIONS[t.operation]}`;
    const res = READS.has(t.operation)
      ? await request(url, 'GET', { accept: 'application/fhir+json' })
      : await request(url, 'POST', headers, JSON.stringify(stored ? t.bodyWithoutSetup : t.body));
    status = res.status;
    text = res.text;
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    await target.restart();
    return {
      ...base,
      passed: false,
      status: 0,
      ms: Date.now() - started,
      message: timedOut
        ? `No answer within ${REQUEST_TIMEOUT_MS} ms (server restarted)`
        : `Request failed: ${String(err)} (server restarted)`,
    };
  }
  const ms = Date.now() - started;
  let actual: Json;
  try {
    actual = JSON.parse(text) as Json;
  } catch {
    return { ...base, passed: false, status, ms, message: `Response is not JSON: ${text.slice(0, 200)}` };
  }
  // The runner's R4 client parses the response as R4 and converts it to R5, then scrubs and sorts it.
  fromR4(actual);
  const pattern = READS.has(t.operation);
  actual = pattern ? normalizeCapabilities(actual) : normalizeResponse(actual, t.operation);
  let message: string | null;
  try {
    message = compareJson(t.expected, actual, { modes: t.modes, variables: { version: '4.0.1' }, pattern });
  } catch (err) {
    message = String(err);
  }
  const klass = `${Math.floor(status / 100)}xx`;
  if (klass !== t.httpCode)
    message = `Response Code fail: should be '${t.httpCode}' but is '${status}'${message ? `\n${message}` : ''}`;
  return { ...base, passed: message === null, status, ms, message: message ?? undefined, actual };
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  let tests = loadTests();
  if (args.only) {
    const only = args.only;
    tests = tests.filter((t) => t.suite === only || t.name === only || t.name.includes(only));
    if (tests.length === 0) throw new Error(`No general-mode test or suite matches "${only}"`);
  }
  const target = new Target();
  const t0 = Date.now();
  await target.start();
  const results: TestResult[] = [];
  try {
    const suites = new Map<string, StoredSuite>();
    for (const t of tests) {
      let stored: StoredSuite | undefined;
      if (args.stored) {
        stored = suites.get(t.suite);
        if (!stored) {
          stored = await storeSetup(target.current!.server.base, target.current!.token, t.suite, t.setup);
          suites.set(t.suite, stored);
        }
      }
      const r = await runTest(target, t, stored);
      results.push(r);
      if (args.only && !r.passed) console.log(formatDiff(r));
    }
  } finally {
    await target.stop();
  }
  console.log(formatTable(results));
  console.log(`(${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  if (args.json) {
    fs.mkdirSync(path.dirname(args.json), { recursive: true });
    fs.writeFileSync(args.json, JSON.stringify(results, null, 2));
    console.log(`detail written to ${args.json}`);
  }
  const passed = results.filter((r) => r.passed).length;
  if (args.stored) console.log('(setup stored through the REST API, one project per suite; not ratcheted)');
  if (args.record && !args.only && !args.stored) {
    writeRatchet(results);
    console.log(`ratchet recorded: ${passed}`);
  }
  if (args.check && !args.only && !args.stored) {
    // Each operation holds its own count: more passes of one never cover fewer of another.
    const floors = readRatchet();
    let dropped = false;
    for (const [op, floor] of Object.entries(floors)) {
      const n = results.filter((r) => r.operation === op && r.passed).length;
      if (n < floor) {
        console.error(
          `Conformance dropped: ${n} ${op} tests passed, the ratchet (conformance/ratchet.json) says ${floor}`,
        );
        dropped = true;
      } else console.log(`ratchet ok: ${op} ${n} >= ${floor}`);
    }
    if (dropped) return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
