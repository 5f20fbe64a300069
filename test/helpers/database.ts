// A test database that several servers, server processes and CLIs use in turn or at once: a restart on the same
// data, a second instance on the same PostgreSQL schema, the import or project CLI on it. The embedded database on
// disk can be opened by one process at a time: a test closes its server before a CLI or another server opens it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { Config } from '../../src/config.js';
import { startServerProcess, type ServerProcess } from './processes.js';
import { dropSchema, newSchemaName, onPostgres, startTestServer, type TestServer } from './server.js';

/** A database shared by the servers of a file or describe block (useTestDatabase). */
export interface TestDatabase {
  /** A temporary folder for the test's own files, removed at the end (with `onDisk: true`). */
  readonly dir: string;
  /** The data directory every server shares, `data` inside `dir`: the embedded database and the index files. */
  readonly dataDir: string;
  /** The PostgreSQL schema every server shares (undefined on the embedded database). */
  readonly schema: string | undefined;
  /** Starts a server on this database; closed at the end if still open. */
  start(opts?: { config?: Partial<Config> }): Promise<TestServer>;
  /** Starts a server process on this database; stopped at the end (SIGKILL after `killAfterMs`) if still running. */
  startProcess(opts?: {
    env?: Record<string, string>;
    timeoutMs?: number;
    killAfterMs?: number;
  }): Promise<ServerProcess>;
}

/** A database for the servers of a file or describe block: a fresh PostgreSQL schema on TEST_DATABASE_URL, and with
 * `onDisk: true` a temporary data directory (on the embedded database, without it, each server has its own database
 * in memory). In afterAll: closes what is still open, drops the schema, removes the directory. */
export function useTestDatabase(opts: { onDisk?: boolean } = {}): TestDatabase {
  let made = false;
  let dir: string | undefined;
  let schema: string | undefined;
  // Closed in reverse order of start: a later instance may depend on an earlier one.
  const open: Array<() => Promise<unknown>> = [];
  beforeAll(() => {
    if (opts.onDisk) dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fhir-test-db-'));
    schema = onPostgres ? newSchemaName() : undefined;
    made = true;
  });
  afterAll(async () => {
    try {
      for (const close of open.reverse()) await close();
    } finally {
      await dropSchema(schema);
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    }
  });
  const ready = (): void => {
    if (!made)
      throw new Error('useTestDatabase: the database is made in beforeAll; use it inside a test or hook');
  };
  const folder = (): string => {
    ready();
    if (!dir) throw new Error('useTestDatabase: pass { onDisk: true } for a data directory');
    return dir;
  };
  // What start() and startProcess() pass: without onDisk, each server has its own data (in memory, or temporary).
  const sharedDataDir = (): string | undefined => (opts.onDisk ? path.join(folder(), 'data') : undefined);
  return {
    get dir() {
      return folder();
    },
    get dataDir() {
      return path.join(folder(), 'data');
    },
    get schema() {
      ready();
      return schema;
    },
    async start(o = {}) {
      ready();
      const server = await startTestServer({ schema, dataDir: sharedDataDir(), config: o.config });
      open.push(() => server.close());
      return server;
    },
    async startProcess(o = {}) {
      ready();
      const proc = await startServerProcess({
        databaseUrl: process.env.TEST_DATABASE_URL,
        schema,
        dataDir: sharedDataDir(),
        env: o.env,
        timeoutMs: o.timeoutMs,
      });
      open.push(() => proc.stop(o.killAfterMs));
      return proc;
    },
  };
}
