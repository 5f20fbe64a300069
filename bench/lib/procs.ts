// Child processes for the benchmark: the FHIR server as a user starts it, and the two ceiling servers.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isBuildFresh } from '../../scripts/build-lib.mjs';

/** The repository root (bench/lib/../..). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const ADMIN_EMAIL = 'bench-admin@example.com';
export const ADMIN_PASSWORD = 'bench-admin-password-1';
export const CLIENT_ID = '7d1f1d53-55a5-4bde-9a2b-4f2f0c0b3c11';
export const CLIENT_SECRET = 'bench-client-secret';

/** A running child process serving HTTP. */
export interface Proc {
  name: string;
  pid: number;
  base: string;
  /** Resident set size of the process in MiB (from /proc/<pid>/status VmRSS). */
  rssMiB(): number | undefined;
  /** The highest resident set size so far in MiB (VmHWM). */
  peakRssMiB(): number | undefined;
  /** Milliseconds from spawning the process to its first /healthz 200 (FHIR servers). */
  startMs?: number;
  stop(): Promise<number | null>;
  /** The last lines the process wrote (for error reports). */
  tail(): string;
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** VmRSS (or with `field`, another size) of a process in MiB, or undefined when it is gone. */
export function rssMiB(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number | undefined {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

function wrap(name: string, child: ChildProcess, base: string, output: string[], ownedDir?: string): Proc {
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
  return {
    name,
    pid: child.pid ?? -1,
    base,
    rssMiB: () => (child.pid ? rssMiB(child.pid) : undefined),
    peakRssMiB: () => (child.pid ? rssMiB(child.pid, 'VmHWM') : undefined),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(timer);
      if (ownedDir) fs.rmSync(ownedDir, { recursive: true, force: true });
      return code;
    },
    tail: () => output.join('').split('\n').slice(-20).join('\n'),
  };
}

function collect(child: ChildProcess, output: string[]): void {
  const keep = (b: Buffer) => {
    output.push(b.toString());
    // Keep only recent output: the server may log a lot under load.
    if (output.length > 200) output.splice(0, output.length - 200);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
}

async function waitHealthy(
  base: string,
  child: ChildProcess,
  timeoutMs: number,
  output: string[],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`exited with ${child.exitCode}: ${output.join('').slice(-2000)}`);
    try {
      const res = await fetch(`${base}healthz`);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    // Often enough to time a start to a few tens of milliseconds.
    await new Promise((r) => setTimeout(r, 25));
  }
  child.kill('SIGKILL');
  throw new Error(`no healthy /healthz within ${timeoutMs} ms: ${output.join('').slice(-2000)}`);
}

/** Where the server keeps its data: a fresh embedded data directory, or a fresh schema on PostgreSQL. */
export interface ServerDb {
  kind: 'pglite' | 'postgres';
  dataDir?: string;
  databaseUrl?: string;
  schema?: string;
}

/** A fresh embedded data directory (removed by the caller). */
export function freshDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'bench-data-'));
}

/** Builds dist/ when it is missing or older than the sources, as `npm start` does (once, before the servers
 * start: several starting at once must not all build). */
function ensureBuild(): void {
  if (isBuildFresh()) return;
  const built = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (built.status !== 0) throw new Error(`npm run build failed (exit ${built.status})`);
}

/** Starts the server as `npm start` does (`node --no-node-snapshot dist/main.js`, the production build; isolated-vm
 * needs the flag) with the bench's bootstrap settings, and waits for /healthz. `main` runs another build's
 * main.js instead (A/B measurements). */
export async function startFhirServer(
  name: string,
  db: ServerDb,
  extraEnv: Record<string, string> = {},
  main?: string,
): Promise<Proc> {
  const port = await freePort();
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${port}/`,
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    CLIENT_ID,
    CLIENT_SECRET,
    LOG_LEVEL: 'warn',
    DATABASE_URL: undefined,
    DATABASE_SCHEMA: undefined,
    ...extraEnv,
  };
  // On PostgreSQL the server still gets a DATA_DIR of its own (for files it may keep); removed on stop.
  let ownedDir: string | undefined;
  if (db.kind === 'postgres') {
    env.DATABASE_URL = db.databaseUrl;
    env.DATABASE_SCHEMA = db.schema;
    // A given folder is the caller's (kept across restarts); else a fresh one, removed on stop.
    env.DATA_DIR = db.dataDir ?? (ownedDir = freshDataDir());
  } else {
    env.DATA_DIR = db.dataDir;
  }
  if (!main) ensureBuild();
  const output: string[] = [];
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, ['--no-node-snapshot', main ?? path.join('dist', 'main.js')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  collect(child, output);
  const base = `http://127.0.0.1:${port}/`;
  try {
    await waitHealthy(base, child, 180_000, output);
  } catch (err) {
    if (ownedDir) fs.rmSync(ownedDir, { recursive: true, force: true });
    throw err;
  }
  return { ...wrap(name, child, base, output, ownedDir), startMs: performance.now() - spawnedAt };
}

/** Starts a ceiling server (bench/ceilings/<kind>.ts) in its own process. */
export async function startCeiling(kind: 'node-http' | 'express'): Promise<Proc> {
  const output: string[] = [];
  const child = spawn(process.execPath, ['--import', 'tsx', path.join('bench', 'ceilings', `${kind}.ts`)], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  collect(child, output);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${kind} ceiling did not start: ${output.join('')}`)),
      30_000,
    );
    child.stdout?.on('data', () => {
      const m = /LISTENING (\d+)/.exec(output.join(''));
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`${kind} ceiling exited ${code}: ${output.join('')}`)));
  });
  return wrap(kind, child, `http://127.0.0.1:${port}/`, output);
}
