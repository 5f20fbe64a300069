// Starts the server as a separate Node process (src/main.ts via tsx), as in production, for multi-instance tests.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CLIENT_ID, CLIENT_SECRET } from './server.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface ServerProcess {
  /** Base URL with trailing slash. */
  base: string;
  port: number;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr (for assertions on logs and for failure messages). */
  output(): string;
  /** Sends SIGTERM and resolves with the exit code (null when killed by a signal). */
  stop(): Promise<number | null>;
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

/** Spawns `node --import tsx src/main.ts` on a free port and waits until GET /healthz answers 200. */
export async function startServerProcess(opts: {
  databaseUrl: string;
  schema: string;
  env?: Record<string, string>;
  timeoutMs?: number;
}): Promise<ServerProcess> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${port}/`,
    DATABASE_URL: opts.databaseUrl,
    DATABASE_SCHEMA: opts.schema,
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    CLIENT_ID,
    CLIENT_SECRET,
    LOAD_CORE_TERMINOLOGY: 'false',
    LOG_LEVEL: 'warn',
    ...opts.env,
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
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
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    if (gone) throw new Error(`server process exited before it was ready:\n${out}`);
    try {
      const r = await fetch(`${base}healthz`);
      if (r.status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server process did not become healthy in time:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    port,
    child,
    output: () => out,
    async stop() {
      if (!gone) child.kill('SIGTERM');
      return exited;
    },
  };
}
