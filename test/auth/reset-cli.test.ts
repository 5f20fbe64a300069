// `npm run user:reset-link -- --email <email>`: a server administrator issues a one-time password reset link on the
// server's database (where no SMTP server is configured to email one); the link then sets the password through the
// server, once. An address without an account, or bad arguments, fail with nothing issued.
import { spawn } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database.js';
import { entryArgs } from '../helpers/processes.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, call, onPostgres, signIn } from '../helpers/server.js';
import { ROOT } from '../helpers/paths.js';

const db = useTestDatabase({ onDisk: true });

function runCli(args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: db.dataDir };
  if (onPostgres)
    Object.assign(env, { DATABASE_URL: process.env.TEST_DATABASE_URL, DATABASE_SCHEMA: db.schema });
  else delete env.DATABASE_URL;
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [...entryArgs('auth/reset-cli'), ...args], { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  // A first start creates the database and its admin (as an operator's first `npm start` would), then stops.
  const first = await db.start();
  await first.close();
}, 120_000);

describe('npm run user:reset-link', () => {
  it('prints a one-time link that sets the password through the server; refuses an unknown address', async () => {
    const ok = await runCli(['--email', ADMIN_EMAIL.toUpperCase()]);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    const url = new URL(/(http\S+)\n$/.exec(ok.stdout)![1]);
    expect(ok.stdout).toMatch(/^password reset link for admin@example\.com \(works once, until \S+Z\):\n/);

    const unknown = await runCli(['--email', 'nobody@example.com']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no account has the address nobody@example\.com/);
    const bad = await runCli(['--mail', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Usage/);

    const server = await db.start();
    const body = {
      id: url.searchParams.get('id'),
      secret: url.searchParams.get('secret'),
      password: 'a cli-made passphrase',
    };
    const headers = { 'content-type': 'application/json' };
    const set = await call(server.base, 'POST', 'auth/setpassword', { body, headers });
    expect(set.status, set.text).toBe(200);
    await expect(signIn(server.base, ADMIN_EMAIL, ADMIN_PASSWORD)).rejects.toThrow(/login failed: 400/);
    expect((await signIn(server.base, ADMIN_EMAIL, 'a cli-made passphrase')).access_token).toBeTruthy();
    const again = await call(server.base, 'POST', 'auth/setpassword', { body, headers });
    expect(again.status).toBe(400);
  }, 240_000);
});
