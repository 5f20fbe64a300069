// Two processes opening one embedded data directory: `npm run import` while the server ran reported success, and
// then the database never opened again. Now the server locks the directory; a second opener is refused with an
// error naming the holder's pid, writes nothing, and the directory still opens afterwards.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database.js';
import { entryArgs } from '../helpers/processes.js';
import { call, signIn } from '../helpers/server.js';
import { ROOT } from '../helpers/paths.js';

const run = promisify(execFile);
const db = useTestDatabase({ onDisk: true });
/** The server process on the data directory (stopped at the end if still running: SIGKILL after 10 s). */
const startProcess = () => db.startProcess({ timeoutMs: 110_000, killAfterMs: 10_000 });

const CS_URL = 'http://example.org/lock-test';

/** Runs the import CLI on the data directory; resolves with its exit code and output. */
async function importCli(): Promise<{ code: number; out: string }> {
  const file = path.join(db.dir, 'cs.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      resourceType: 'CodeSystem',
      url: CS_URL,
      status: 'active',
      content: 'complete',
      concept: [{ code: 'a', display: 'A' }],
    }),
  );
  try {
    const { stdout, stderr } = await run(process.execPath, [...entryArgs('terminology/import/cli'), file], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: db.dataDir, LOG_LEVEL: 'silent', DATABASE_URL: '' },
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: (e.stdout ?? '') + (e.stderr ?? '') };
  }
}

describe('embedded data directory lock', () => {
  it('refuses the import CLI while the server holds the directory, naming its pid; nothing is written', async () => {
    let server = await startProcess();
    const pid = server.child.pid;
    const refused = await importCli();
    expect(refused.code, refused.out).not.toBe(0);
    expect(refused.out).toContain(`in use by process ${pid}`);

    // The server is unharmed and the CLI wrote nothing.
    const token = (await signIn(server.base)).access_token;
    const search = await call(server.base, 'GET', `fhir/R4/CodeSystem?url=${encodeURIComponent(CS_URL)}`, {
      token,
    });
    expect(search.status).toBe(200);
    expect(search.body.total).toBe(0);

    // Stopped, the server releases the directory: it opens again, and the CLI may use it.
    expect(await server.stop(20_000)).toBe(0);
    const imported = await importCli();
    expect(imported.code, imported.out).toBe(0);
    server = await startProcess();
    const token2 = (await signIn(server.base)).access_token;
    const after = await call(server.base, 'GET', `fhir/R4/CodeSystem?url=${encodeURIComponent(CS_URL)}`, {
      token: token2,
    });
    expect(after.body.total).toBe(1);
  }, 300_000);
});
