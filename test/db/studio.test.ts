// `npm run studio` in a real browser, offline: the CLI opens the server's database (a data directory the server
// used and left, or TEST_DATABASE_URL's schema under the PostgreSQL suite), and Studio lists the User rows with no
// request leaving loopback. Prisma 6.19's `prisma studio` showed a blank page here (it downloads a query engine).
// Screenshot: output/screenshots/studio-users.png. Skipped without /usr/bin/chromium unless REQUIRE_BROWSER=1.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { haveBrowser, launchChromium, offLoopback, SCREENSHOTS } from '../helpers/browser.js';
import { useTestDatabase } from '../helpers/database.js';
import { entryArgs } from '../helpers/processes.js';
import { ADMIN_EMAIL, onPostgres } from '../helpers/server.js';
import { ROOT } from '../helpers/paths.js';

// Registered first, so its afterAll (schema dropped, directory removed) runs after Studio has stopped.
const db = useTestDatabase({ onDisk: true });
let browser: Browser;
let studio: ChildProcess | undefined;
let studioUrl = '';

/** Starts the Studio CLI (what `npm run studio` runs) and resolves with the URL it prints. */
function startStudio(env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, entryArgs('db/studio-cli'), { cwd: ROOT, env });
  studio = child;
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output);
      if (m) resolve(m[1]);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`studio exited with ${code}: ${output}`)));
  });
}

beforeAll(async () => {
  if (!haveBrowser) return;
  // A server run seeds the admin user, then stops (the embedded database is single-process).
  const server = await db.start();
  await server.close();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    STUDIO_PORT: '0',
    CHECKPOINT_DISABLE: '1',
    ...(onPostgres
      ? { DATABASE_URL: process.env.TEST_DATABASE_URL, DATABASE_SCHEMA: db.schema }
      : { DATA_DIR: db.dataDir }),
  };
  studioUrl = await startStudio(env);
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  if (studio && studio.exitCode === null) {
    const exited = new Promise((r) => studio!.once('exit', r));
    studio.kill('SIGTERM');
    await exited;
  }
}, 60_000);

describe.skipIf(!haveBrowser)('Prisma Studio in Chromium (npm run studio)', () => {
  it('lists the User rows, offline; nothing leaves loopback', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 700 } });
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));

    // On PostgreSQL the server's tables are in the test's own schema: open it through Studio's URL state.
    const res = await page.goto(`${studioUrl}#schema=${db.schema ?? 'public'}&table=User&view=table`, {
      waitUntil: 'load',
    });
    expect(res?.status()).toBe(200);
    // The table list comes from the database itself (Prisma's models are tables here).
    await page.getByText('ProjectMembership', { exact: true }).first().waitFor({ timeout: 60_000 });
    await page.getByText(ADMIN_EMAIL).first().waitFor({ timeout: 60_000 });
    await page.screenshot({
      path: path.join(SCREENSHOTS, onPostgres ? 'studio-users-pg.png' : 'studio-users.png'),
    });

    expect(offLoopback(requested)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);

  it('answers its query endpoint only with the page token, and only on a loopback Host', async () => {
    const query = { procedure: 'query', query: { sql: 'SELECT email FROM "User"', parameters: [] } };
    const noToken = await fetch(`${studioUrl}bff`, { method: 'POST', body: JSON.stringify(query) });
    expect(noToken.status).toBe(403);

    const html = await (await fetch(studioUrl)).text();
    const token = /name="studio-token" content="([^"]+)"/.exec(html)?.[1] ?? '';
    const ok = await fetch(`${studioUrl}bff`, {
      method: 'POST',
      headers: { 'x-studio-token': token },
      body: JSON.stringify(query),
    });
    expect(ok.status).toBe(200);
    const [error, rows] = (await ok.json()) as [unknown, Array<{ email: string }>];
    expect(error).toBeNull();
    expect(rows.map((r) => r.email)).toContain(ADMIN_EMAIL);

    // A DNS-rebinding page reaches 127.0.0.1 under its own host name.
    const { port } = new URL(studioUrl);
    const rebound = await new Promise<number>((resolve, reject) => {
      import('node:http').then(({ request }) => {
        const req = request(
          { host: '127.0.0.1', port, path: '/', headers: { host: `evil.example:${port}` } },
          (r) => {
            r.resume();
            resolve(r.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      }, reject);
    });
    expect(rebound).toBe(421);
  });
});
