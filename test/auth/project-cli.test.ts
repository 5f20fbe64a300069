// `npm run project:create`: creates a project, its admin and its first client application on the server's database
// (password from stdin or PROJECT_ADMIN_PASSWORD, never argv); the admin and the client then sign in to it.
import { spawn } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database.js';
import { entryArgs } from '../helpers/processes.js';
import { call, onPostgres, signIn } from '../helpers/server.js';
import { ROOT } from '../helpers/paths.js';

const db = useTestDatabase({ onDisk: true });

function runCli(args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}) {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: db.dataDir, ...opts.env };
  delete env.PROJECT_ADMIN_PASSWORD;
  Object.assign(env, opts.env);
  if (onPostgres)
    Object.assign(env, { DATABASE_URL: process.env.TEST_DATABASE_URL, DATABASE_SCHEMA: db.schema });
  else delete env.DATABASE_URL;
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [...entryArgs('auth/project-cli'), ...args], { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.stdin ?? '');
  });
}

beforeAll(async () => {
  // A first start creates the database (as an operator's first `npm start` would), then stops.
  const first = await db.start();
  await first.close();
}, 120_000);

describe('npm run project:create', () => {
  it('creates a project whose admin signs in to it; refuses a taken address and a short password', async () => {
    const ok = await runCli(['--name', 'CLI Clinic', '--admin-email', 'cli-admin@example.com'], {
      stdin: 'cli-password-123\n',
    });
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    const printed = ok.stdout.match(
      /^created project [0-9a-f-]{36} with admin user [0-9a-f-]{36}\nclient application ([0-9a-f-]{36}), secret \(shown once, store it now\): ([A-Za-z0-9_-]{43})\n$/,
    );
    expect(printed, ok.stdout).toBeTruthy();

    const dup = await runCli(['--name', 'Again', '--admin-email', 'cli-admin@example.com'], {
      env: { PROJECT_ADMIN_PASSWORD: 'another-password-1' },
    });
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/already exists \(adminEmail\)/);
    const short = await runCli(['--name', 'Short', '--admin-email', 'short@example.com'], {
      stdin: 'short\n',
    });
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/adminPassword/);
    const bad = await runCli(['--name', 'No email']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Usage/);

    const server = await db.start();
    const t = await signIn(server.base, 'cli-admin@example.com', 'cli-password-123');
    const me = await call(server.base, 'GET', 'auth/me', { token: t.access_token });
    expect(me.body.project.name).toBe('CLI Clinic');
    expect(me.body.membership.admin).toBe(true);
    // The client application it printed signs in to the new project.
    const cc = await call(server.base, 'POST', 'oauth2/token', {
      raw: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: printed![1],
        client_secret: printed![2],
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(cc.status, cc.text).toBe(200);
    expect(cc.body.project.reference).toBe(`Project/${me.body.project.id}`);
  }, 240_000);
});
