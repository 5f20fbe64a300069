// Logging never holds the server: a real server process whose stdout pipe nobody reads (a stopped log shipper)
// keeps answering, drops the log lines it cannot write (counted in /healthz), and on SIGTERM exits within the
// shutdown grace and close margin; a reader that is gone (EPIPE) does not crash it either. Before, pino's destination flushed synchronously at exit into the full pipe: the process got
// SIGTERM, ran its shutdown, and never exited until the watchdog SIGKILLed it (SHUTDOWN_GRACE + 10 s later).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, serverEntryArgs, serverProcessEnv } from '../helpers/processes.js';
import { onPostgres, newSchemaName, dropSchema } from '../helpers/server.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const GRACE_MS = 3_000;
/** What the server allows itself after the grace to close (src/main.ts: the forced exit comes then). */
const CLOSE_MARGIN_MS = 5_000;
const dataDirs: string[] = [];
const schemas: string[] = [];

afterAll(async () => {
  for (const d of dataDirs) fs.rmSync(d, { recursive: true, force: true });
  for (const s of schemas) await dropSchema(s);
});

describe('a server whose stdout is not read', () => {
  it.each([
    ['stopped', 'drops log lines instead of blocking'],
    ['gone', 'drops log lines after EPIPE instead of crashing'],
  ] as const)(
    'reader %s: %s, and exits within the grace on SIGTERM',
    async (reader, _what) => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fhir-logs-'));
      dataDirs.push(dataDir);
      const schema = onPostgres ? newSchemaName() : undefined;
      if (schema) schemas.push(schema);
      const port = await freePort();
      const base = `http://127.0.0.1:${port}/`;
      const child = spawn(process.execPath, serverEntryArgs(), {
        cwd: ROOT,
        env: serverProcessEnv({
          port,
          databaseUrl: onPostgres ? process.env.TEST_DATABASE_URL : undefined,
          schema,
          dataDir,
          env: { LOG_LEVEL: 'info', SHUTDOWN_GRACE: String(GRACE_MS) },
        }),
        // stdout is a pipe this test never reads: once the pipe's buffer is full, the server's writes cannot go on.
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // A reader that is gone: the server's writes fail with EPIPE.
      if (reader === 'gone') child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      // Set by the exit handler (read through exitOf: TypeScript would keep it narrowed to undefined).
      const state: { exited?: { code: number | null; signal: NodeJS.Signals | null; at: number } } = {};
      const exitOf = () => state.exited;
      const exit = new Promise<void>((resolve) =>
        child.once('exit', (code, signal) => {
          state.exited = { code, signal, at: Date.now() };
          resolve();
        }),
      );
      try {
        const deadline = Date.now() + 120_000;
        for (;;) {
          if (state.exited) throw new Error(`server exited before it was ready:\n${stderr}`);
          const ok = await fetch(`${base}healthz`).then(
            (r) => r.status === 200,
            () => false,
          );
          if (ok) break;
          if (Date.now() > deadline) throw new Error(`server not ready in time:\n${stderr}`);
          await new Promise((r) => setTimeout(r, 200));
        }

        // Each request logs one line holding its path: ~4 kB a line, 2 MB in all (the pipe holds 64 kB, the
        // server's buffer 1 MiB). Every request is still answered.
        const long = 'x'.repeat(4000);
        for (let round = 0; round < 50; round++) {
          const statuses = await Promise.all(
            Array.from({ length: 10 }, (_, i) =>
              fetch(`${base}${long}${round}-${i}`).then(async (r) => {
                await r.arrayBuffer();
                return r.status;
              }),
            ),
          );
          expect(statuses.every((s) => s === 404)).toBe(true);
        }
        const health = (await (await fetch(`${base}healthz`)).json()) as { logs?: { dropped: number } };
        expect(state.exited).toBeUndefined();

        const signalled = Date.now();
        child.kill('SIGTERM');
        // Well past the grace and margin (the old code was still there at grace + 10 s, when its watchdog killed it).
        const timer = setTimeout(() => child.kill('SIGKILL'), GRACE_MS + CLOSE_MARGIN_MS + 3_000);
        await exit;
        clearTimeout(timer);
        const exited = exitOf();
        expect({ code: exited?.code, signal: exited?.signal }).toEqual({ code: 0, signal: null });
        // Exit 0: closed normally, not by the forced exit (code 1, grace + 5 s) or the watchdog's SIGKILL. The
        // server's bound is the grace for requests and CLOSE_MARGIN_MS more to close bots and the database (on a
        // loaded CI machine, beside bots running out of memory, the whole shutdown once took 5 s).
        expect(exited!.at - signalled).toBeLessThan(GRACE_MS + CLOSE_MARGIN_MS);
        // Checked last, so that the old code shows its failure to exit first.
        expect(health.logs?.dropped).toBeGreaterThan(0);
      } finally {
        if (!state.exited) child.kill('SIGKILL');
        await exit;
      }
    },
    180_000,
  );
});
