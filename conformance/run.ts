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
import zlib from 'node:zlib';
import { judge } from './judge.js';
import { loadTests, OPERATIONS, READS, ROOT, type ConformanceTest } from './loader.js';
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
  /** Another terminology server's FHIR base (e.g. FHIRsmith's `http://127.0.0.1:3999/tx/r4/`): no server is
   * started, no token sent. */
  target?: string;
  /** Where to write every answer (status and body by test name; gzipped when the name ends in .gz). */
  answers?: string;
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
    else if (x === '--target') a.target = argv[++i];
    else if (x === '--answers') a.answers = argv[++i];
    else
      throw new Error(
        `Unknown argument ${x} (use --only <suite|test>, --json [file], --check, --record, --stored, ` +
          '--target <base url>, --answers <file>)',
      );
  }
  return a;
}

interface Started {
  server: ServerProcess;
  token: string;
}

/** Where the tests are sent. */
interface TestTarget {
  /** The URL of an operation path (`ValueSet/$expand`). */
  url(path: string): string;
  token?: string;
  restart(): Promise<void>;
}

/** Another server, already running (a reference server the runner is calibrated on). */
class ExternalTarget implements TestTarget {
  constructor(private readonly base: string) {}
  url(p: string): string {
    return `${this.base.replace(/\/?$/, '/')}${p}`;
  }
  async restart(): Promise<void> {}
}

/** The server under test. Its embedded database lives in one temporary folder for the whole run, so a restart
 * after a frozen request skips migrations and the core load (~15 s instead of ~45 s on a loaded machine); every
 * test brings its own resources (tx-resource), so nothing a killed server left behind matters. */
class Target implements TestTarget {
  current?: Started;

  url(p: string): string {
    return `${this.current!.server.base}fhir/R4/${p}`;
  }

  get token(): string | undefined {
    return this.current?.token;
  }

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

async function runTest(target: TestTarget, t: ConformanceTest, stored?: StoredSuite): Promise<TestResult> {
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
  const token = stored?.token ?? target.token;
  const headers: Record<string, string> = {
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    'content-type': 'application/fhir+json',
    accept: 'application/fhir+json',
  };
  if (t.acceptLanguage) headers['accept-language'] = t.acceptLanguage;
  for (const [name, value] of Object.entries(t.headers)) headers[name.toLowerCase()] = value;
  let status = 0;
  let text: string;
  try {
    const url = target.url(OPERATIONS[t.operation]);
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
  return { ...base, ms, status, text, ...judge(t, status, text) };
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  let tests = loadTests();
  if (args.only) {
    const only = args.only;
    tests = tests.filter((t) => t.suite === only || t.name === only || t.name.includes(only));
    if (tests.length === 0) throw new Error(`No general-mode test or suite matches "${only}"`);
  }
  const own = args.target ? undefined : new Target();
  const target: TestTarget = own ?? new ExternalTarget(args.target!);
  if (args.target && args.stored) throw new Error('--stored needs the server this runner starts');
  const t0 = Date.now();
  await own?.start();
  const results: TestResult[] = [];
  const answers: Record<string, { status: number; text: string }> = {};
  try {
    const suites = new Map<string, StoredSuite>();
    for (const t of tests) {
      let stored: StoredSuite | undefined;
      if (args.stored) {
        stored = suites.get(t.suite);
        if (!stored) {
          stored = await storeSetup(own!.current!.server.base, own!.current!.token, t.suite, t.setup);
          suites.set(t.suite, stored);
        }
      }
      const r = await runTest(target, t, stored);
      results.push(r);
      if (args.answers) answers[`${t.suite}/${t.name}`] = { status: r.status, text: r.text ?? '' };
      if (args.only && !r.passed) console.log(formatDiff(r));
    }
  } finally {
    await own?.stop();
  }
  if (args.answers) {
    const json = JSON.stringify({
      target: args.target ?? 'this server',
      recorded: new Date().toISOString(),
      answers,
    });
    fs.mkdirSync(path.dirname(args.answers), { recursive: true });
    fs.writeFileSync(args.answers, args.answers.endsWith('.gz') ? zlib.gzipSync(json, { level: 9 }) : json);
    console.log(`answers written to ${args.answers}`);
  }
  console.log(formatTable(results));
  console.log(`(${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  if (args.json) {
    fs.mkdirSync(path.dirname(args.json), { recursive: true });
    fs.writeFileSync(
      args.json,
      JSON.stringify(
        results.map(({ text: _text, ...r }) => r),
        null,
        2,
      ),
    );
    console.log(`detail written to ${args.json}`);
  }
  const passed = results.filter((r) => r.passed).length;
  if (args.stored) console.log('(setup stored through the REST API, one project per suite; not ratcheted)');
  if (args.record && !args.only && !args.stored && !args.target) {
    writeRatchet(results);
    console.log(`ratchet recorded: ${passed}`);
  }
  if (args.check && !args.only && !args.stored && !args.target) {
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
