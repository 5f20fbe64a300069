// Starts the server as a separate Node process, as in production: for multi-instance tests, and for attack tests (a
// request that stalls or kills the server must not take the test runner with it). It runs the production build
// (dist/main.js) when `npm run build` output matches the current sources, else src/main.ts through tsx: tsx
// compiles every file at each start, which took 10-30 s per process on a loaded CI machine.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { isBuildFresh } from '../../scripts/build-lib.mjs';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  CLIENT_ID,
  CLIENT_SECRET,
  dropSchema,
  newSchemaName,
  onPostgres,
  signIn,
} from './server.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface ServerProcess {
  /** Base URL with trailing slash. */
  base: string;
  port: number;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr (for assertions on logs and for failure messages). */
  output(): string;
  /** True until the process has exited. */
  alive(): boolean;
  /** Sends SIGTERM and resolves with the exit code (null when killed by a signal). After `killAfterMs` (default
   * 30 s) without an exit it sends SIGKILL, so a stuck server cannot hang the test run. Removes a temporary
   * data directory. */
  stop(killAfterMs?: number): Promise<number | null>;
}

/** A port that was free a moment ago (the OS picks it; closed before returning). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Node arguments that run a program of src/ (`main`, `terminology/import/cli`, ...) as npm scripts do, from the
 * repository root: the build when fresh, else the sources through tsx (slower to start: it compiles each file). */
export function entryArgs(entry: string): string[] {
  return isBuildFresh()
    ? ['--no-node-snapshot', `dist/${entry}.js`]
    : ['--no-node-snapshot', '--import', 'tsx', `src/${entry}.ts`];
}

/** Node arguments that start the server (see entryArgs). */
export function serverEntryArgs(): string[] {
  return entryArgs('main');
}

/** The environment of a server process on `port`: the test accounts, quiet logs, the test hash cost, PostgreSQL
 * (`databaseUrl`, `schema`) or the embedded database in `dataDir`; `env` on top (a variable given as undefined is
 * left unset: `NODE_ENV: undefined` starts the server as `npm start` does, in production). */
export function serverProcessEnv(opts: {
  port: number;
  databaseUrl?: string;
  schema?: string;
  dataDir?: string;
  env?: Record<string, string | undefined>;
}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'test',
    PORT: String(opts.port),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${opts.port}/`,
    ...(opts.databaseUrl
      ? { DATABASE_URL: opts.databaseUrl, DATABASE_SCHEMA: opts.schema }
      : { DATA_DIR: opts.dataDir }),
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    CLIENT_ID,
    CLIENT_SECRET,
    LOAD_CORE_TERMINOLOGY: 'false',
    LOG_LEVEL: 'warn',
    // The test cost (see setup.ts): child processes get a clean environment.
    ...(process.env.PASSWORD_HASH_COST ? { PASSWORD_HASH_COST: process.env.PASSWORD_HASH_COST } : {}),
    ...(process.env.PASSWORD_HASH_PARALLELISM
      ? { PASSWORD_HASH_PARALLELISM: process.env.PASSWORD_HASH_PARALLELISM }
      : {}),
    ...opts.env,
  };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return env;
}

/** Spawns the server (see serverEntryArgs) on a free port and waits until GET /healthz answers 200. Without
 * `databaseUrl` it runs on the embedded database in `dataDir` (default: a new temporary directory). */
export async function startServerProcess(opts: {
  databaseUrl?: string;
  schema?: string;
  dataDir?: string;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
}): Promise<ServerProcess> {
  const port = await freePort();
  const tempDir =
    !opts.databaseUrl && !opts.dataDir ? fs.mkdtempSync(path.join(os.tmpdir(), 'fhir-proc-')) : undefined;
  const dataDir = opts.dataDir ?? tempDir;
  const env = serverProcessEnv({
    port,
    databaseUrl: opts.databaseUrl,
    schema: opts.schema,
    dataDir,
    env: opts.env,
  });
  const child = spawn(process.execPath, serverEntryArgs(), {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let gone = false;
  void exited.then(() => (gone = true));

  const base = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  for (;;) {
    if (gone) {
      if (tempDir) fs.rmSync(tempDir, { recursive: true, force: true });
      throw new Error(`server process exited before it was ready:\n${out}`);
    }
    try {
      const r = await fetch(`${base}healthz`);
      if (r.status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      if (tempDir) fs.rmSync(tempDir, { recursive: true, force: true });
      throw new Error(`server process did not become healthy in time:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    port,
    child,
    output: () => out,
    alive: () => !gone,
    async stop(killAfterMs = 30_000) {
      if (!gone) child.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (!gone) child.kill('SIGKILL');
      }, killAfterMs);
      const code = await exited;
      clearTimeout(timer);
      if (tempDir) fs.rmSync(tempDir, { recursive: true, force: true });
      return code;
    },
  };
}

/** What a test server process is started with (see startTestProcess). */
export interface TestProcessOptions {
  /** Environment settings over the test defaults. */
  env?: Record<string, string | undefined>;
  /** How long to wait for /healthz (default 120 s). */
  timeoutMs?: number;
  /** How long close() waits for the exit before SIGKILL (default 30 s). */
  killAfterMs?: number;
}

/** A server process on a database of its own: a temporary data directory, or a fresh schema on TEST_DATABASE_URL. */
export interface TestProcess extends ServerProcess {
  schema?: string;
  /** Stops the process (see ServerProcess.stop) and drops its schema. */
  close(): Promise<void>;
}

/** Starts a server process on a database of its own (see TestProcess). */
export async function startTestProcess(opts: TestProcessOptions = {}): Promise<TestProcess> {
  const schema = onPostgres ? newSchemaName() : undefined;
  let proc: ServerProcess;
  try {
    proc = await startServerProcess({
      databaseUrl: process.env.TEST_DATABASE_URL,
      schema,
      env: opts.env,
      timeoutMs: opts.timeoutMs,
    });
  } catch (err) {
    await dropSchema(schema);
    throw err;
  }
  return {
    ...proc,
    schema,
    async close() {
      await proc.stop(opts.killAfterMs);
      await dropSchema(schema);
    },
  };
}

/** The server process of a test file or describe block (useServerProcess): read its fields inside tests and hooks. */
export interface UsedServerProcess extends Pick<
  TestProcess,
  'base' | 'port' | 'child' | 'schema' | 'output' | 'alive'
> {
  /** An access token of the first start's admin (with `signIn: true`). */
  readonly token: string;
}

/** Starts a server process in beforeAll (and signs its admin in with `signIn: true`), closes it in afterAll (see
 * startTestProcess). Call at the top of a file or of a describe block. */
export function useServerProcess(opts: TestProcessOptions & { signIn?: boolean } = {}): UsedServerProcess {
  let running: TestProcess | undefined;
  let token: string | undefined;
  // The hook waits as long as the start may take (a loaded machine, a first start that loads the core definitions).
  beforeAll(
    async () => {
      running = await startTestProcess(opts);
      if (opts.signIn) token = (await signIn(running.base)).access_token;
    },
    (opts.timeoutMs ?? 120_000) + 10_000,
  );
  afterAll(async () => {
    await running?.close();
  });
  const started = (): TestProcess => {
    if (!running)
      throw new Error('useServerProcess: the process starts in beforeAll; use it inside a test or hook');
    return running;
  };
  return {
    get base() {
      return started().base;
    },
    get port() {
      return started().port;
    },
    get child() {
      return started().child;
    },
    get schema() {
      return started().schema;
    },
    output: () => started().output(),
    alive: () => started().alive(),
    get token() {
      if (token === undefined) throw new Error('useServerProcess: pass { signIn: true } for a token');
      return token;
    },
  };
}

/** Runs `fn` with a server process of its own (special settings, or a test that stops it): closes it whatever
 * happens. */
export async function withServerProcess<T>(
  opts: TestProcessOptions,
  fn: (proc: TestProcess) => Promise<T>,
): Promise<T> {
  const proc = await startTestProcess(opts);
  try {
    return await fn(proc);
  } finally {
    await proc.close();
  }
}
