// The Prisma CLI configuration (prisma.config.ts) over the embedded database: commands that never connect must
// exit even when the data directory already exists (`prisma -v` runs in @prisma/client's install script, so a
// hang there hangs `npm install`).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PGlite } from '@electric-sql/pglite';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prisma-cli-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

function runPrisma(args: string[]): Promise<{ code: number | null; stdout: string; timedOut: boolean }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, CHECKPOINT_DISABLE: '1' };
  delete env.DATABASE_URL;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.resolve('node_modules/prisma/build/index.js'), ...args], {
      env,
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, timedOut });
    });
  });
}

describe('prisma CLI on the embedded database', () => {
  it('`prisma -v` exits on an existing data directory, with the PGlite adapter configured', async () => {
    // A directory left by a process that did not close it (as a killed server, or an earlier CLI run, leaves it).
    const db = new PGlite(path.join(dataDir, 'pglite'));
    await db.waitReady;
    await db.exec('CREATE TABLE IF NOT EXISTS marker (id int)');

    for (let run = 0; run < 2; run++) {
      const r = await runPrisma(['-v']);
      expect(r.timedOut).toBe(false);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Schema Engine Adapter\s*:\s*pglite-prisma-adapter/);
    }
    await db.close();
  }, 90_000);
});
