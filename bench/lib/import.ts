// `npm run import` as the bench runs it: a child process against the database the environment names, with its
// wall time and peak RSS.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { signIn } from './client.js';
import { freshDataDir, ROOT, startFhirServer, type ServerDb } from './procs.js';

/** VmHWM (peak RSS) of a process in MiB, or undefined when it is gone. */
export function peakMiB(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

/** Runs `npm run import -- <args>` against the database env names; wall time and peak RSS (polled VmHWM). */
export async function runImport(
  db: ServerDb,
  env: Record<string, string | undefined>,
  args: string[],
): Promise<{ ms: number; peakMiB: number; out: string }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/terminology/import/cli.ts', ...args], {
    cwd: ROOT,
    env: { ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, peakMiB(child.pid!) ?? 0);
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(timer);
  if (code !== 0) throw new Error(`import exited ${code} (${db.kind}): ${out.slice(-1500)}`);
  return { ms: performance.now() - t0, peakMiB: peak, out };
}

/** A database ready for `npm run import`, as a user gets one: one data folder for every start and import (on
 * PostgreSQL it holds only the index files), the project and admin made by a first start of the server, which is
 * then stopped (the embedded database is one process's at a time). Returns the server's view of the database and
 * the environment the import CLI runs with. */
export async function importTarget(
  db: ServerDb,
): Promise<{ sdb: ServerDb; env: Record<string, string | undefined>; ownData: string }> {
  const ownData = freshDataDir();
  const sdb: ServerDb = { ...db, dataDir: ownData };
  const server = await startFhirServer('A', sdb, { LOAD_CORE_TERMINOLOGY: 'false' });
  await signIn(server.base);
  await server.stop();
  const env: Record<string, string | undefined> = {
    ...process.env,
    LOG_LEVEL: 'warn',
    DATABASE_URL: db.kind === 'postgres' ? db.databaseUrl : undefined,
    DATABASE_SCHEMA: db.kind === 'postgres' ? db.schema : undefined,
    DATA_DIR: ownData,
  };
  return { sdb, env, ownData };
}
