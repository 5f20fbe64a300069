// The audit log of accounts (issue 24, item 6): password changes and resets (the link through a real SMTP server),
// second-factor enrolment, sign-in, wrong codes, recovery codes and disabling are recorded in the account's projects
// with their actor, address and user agent; no record holds a secret, token, password, code or link (every one this
// file saw is looked for in every stored row); records older than the retention are removed.
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { generate } from 'otplib';
import pino from 'pino';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/auth/audit-log.js';
import { auditRequests } from '../helpers/audit.js';
import { signIn, useTestServer } from '../helpers/server.js';
import { addUser, createProject, type Account, type ProjectAdmin } from '../helpers/projects.js';

/** Mail the SMTP server received (the reset link comes this way, as a user gets it). */
const inbox: { to: string; text: string }[] = [];
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  logger: false,
  onData(stream, session, done) {
    let text = '';
    stream.on('data', (d: Buffer) => (text += d.toString()));
    stream.on('end', () => {
      inbox.push({ to: session.envelope.rcptTo.map((r) => r.address).join(','), text });
      done();
    });
  },
});
const smtpPort = await new Promise<number>((resolve) =>
  smtp.listen(0, '127.0.0.1', () => resolve((smtp.server.address() as AddressInfo).port)),
);
afterAll(() => new Promise<void>((resolve) => smtp.close(() => resolve())));

const s = useTestServer({
  signIn: true,
  config: { trustProxy: true, smtpUrl: `smtp://127.0.0.1:${smtpPort}` },
});
const { gql, post, latest, login, countRows } = auditRequests(s);

/** Every secret, token, password and code this file saw: none may be in any audit row. */
const secrets: string[] = [];
let admin: ProjectAdmin;

beforeAll(async () => {
  admin = await createProject(s.base, s.token, 'Audit accounts project');
  secrets.push(admin.password, admin.clientSecret, admin.token);
});

describe('passwords and second factors', () => {
  let user: Account;
  beforeAll(async () => {
    user = await addUser(s.base, admin.token);
    secrets.push(user.password, user.token);
  });

  it('records a password change and a wrong current password', async () => {
    const fresh = `new-${crypto.randomBytes(8).toString('hex')}`;
    secrets.push(fresh);
    const bad = await post(
      'auth/changepassword',
      { oldPassword: 'wrong-one-here', newPassword: fresh },
      user.token,
    );
    expect(bad.status).toBe(400);
    expect(await latest(admin.token, 'password.change')).toMatchObject({
      outcome: 'failure',
      actorUserId: user.userId,
      detail: { reason: 'wrong current password' },
    });
    const ok = await post(
      'auth/changepassword',
      { oldPassword: user.password, newPassword: fresh },
      user.token,
    );
    expect(ok.status, ok.text).toBe(200);
    expect(await latest(admin.token, 'password.change')).toMatchObject({
      outcome: 'success',
      actorUserId: user.userId,
      targetType: 'user',
      targetId: user.userId,
    });
    user.password = fresh;
  });

  it('records a reset link asked for and used, never the link', async () => {
    expect((await post('auth/resetpassword', { email: user.email })).status).toBe(200);
    expect(await latest(admin.token, 'password.reset.request')).toMatchObject({
      actorUserId: null,
      targetId: user.userId,
      detail: { via: 'email' },
    });
    let mail: { text: string } | undefined;
    for (let i = 0; i < 100 && !mail; i++) {
      mail = inbox.find((m) => m.to === user.email);
      if (!mail) await new Promise((r) => setTimeout(r, 50));
    }
    const text = mail!.text.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    const url = new URL(/(http:\/\/\S+auth\/setpassword\?\S+)/.exec(text)![1]);
    const [id, secret] = [url.searchParams.get('id')!, url.searchParams.get('secret')!];
    secrets.push(secret, url.toString());
    const wrong = await post('auth/setpassword', {
      id,
      secret: 'not-the-secret',
      password: 'whatever-new-pw',
    });
    expect(wrong.status).toBe(400);
    expect(await latest(admin.token, 'password.reset')).toMatchObject({
      outcome: 'failure',
      targetId: user.userId,
    });
    const fresh = `reset-${crypto.randomBytes(8).toString('hex')}`;
    secrets.push(fresh);
    expect((await post('auth/setpassword', { id, secret, password: fresh })).status).toBe(200);
    expect(await latest(admin.token, 'password.reset')).toMatchObject({
      outcome: 'success',
      actorUserId: user.userId,
      targetId: user.userId,
    });
    user.password = fresh;
    user.token = (await signIn(s.base, user.email, fresh)).access_token;
    secrets.push(user.token);
  });

  it('records enrolment, a second-factor sign-in, a wrong code, a recovery code used and disabling', async () => {
    const started = await gql(user.token, 'mutation { startMfaEnrollment { enrollUri } }');
    const totp = new URL(started.body.data.startMfaEnrollment.enrollUri).searchParams.get('secret')!;
    const code = (steps = 0) => generate({ secret: totp, epoch: Math.floor(Date.now() / 1000) + steps * 30 });
    const first = await code();
    const enrolled = await gql(user.token, 'mutation($t: String!) { enrollMfa(token: $t) }', { t: first });
    expect(enrolled.status, enrolled.text).toBe(200);
    const recovery = enrolled.body.data.enrollMfa as string[];
    secrets.push(totp, started.body.data.startMfaEnrollment.enrollUri, first, ...recovery);
    expect(await latest(admin.token, 'mfa.enroll')).toMatchObject({
      actorUserId: user.userId,
      targetId: user.userId,
    });

    const pending = await login(user.email, user.password);
    expect(pending.body.mfaRequired).toBe(true);
    expect(await latest(admin.token, 'signin')).toMatchObject({
      actorLoginId: pending.body.login,
      detail: { method: 'password', waitsFor: 'verify' },
    });
    const valid = new Set(await Promise.all([-2, -1, 0, 1, 2].map((n) => code(n))));
    const wrongCode = ['000000', '111111', '222222'].find((c) => !valid.has(c))!;
    const bad = await post('auth/mfa/verify', { login: pending.body.login, token: wrongCode });
    expect(bad.status).toBe(400);
    expect(await latest(admin.token, 'signin.mfa.failed')).toMatchObject({
      outcome: 'failure',
      actorUserId: user.userId,
      actorLoginId: pending.body.login,
    });
    const done = await post('auth/mfa/verify', { login: pending.body.login, token: recovery[0] });
    expect(done.status, done.text).toBe(200);
    secrets.push(done.body.code);
    expect(await latest(admin.token, 'mfa.recovery.used')).toMatchObject({
      actorUserId: user.userId,
      detail: { recoveryCodesLeft: recovery.length - 1 },
    });
    expect(await latest(admin.token, 'signin.mfa')).toMatchObject({
      actorLoginId: pending.body.login,
      detail: { method: 'password+recovery' },
    });

    const wrongPw = await gql(user.token, 'mutation { disableMfa(password: "not-my-password") }');
    expect(wrongPw.status).toBe(400);
    expect(await latest(admin.token, 'mfa.disable')).toMatchObject({
      outcome: 'failure',
      detail: { reason: 'wrong password' },
    });
    const off = await gql(user.token, 'mutation($p: String) { disableMfa(password: $p) }', {
      p: user.password,
    });
    expect(off.status, off.text).toBe(200);
    expect(await latest(admin.token, 'mfa.disable')).toMatchObject({
      outcome: 'success',
      detail: { by: 'password' },
    });
  });
});

describe('what is kept', () => {
  it('no record holds a secret, token, password, code or link', async () => {
    // A client application created and its secret rotated: both secrets are answers the log must not keep.
    const made = await gql(
      admin.token,
      'mutation { createClientApplication(name: "Secretive") { client { id } secret } }',
    );
    const id = made.body.data.createClientApplication.client.id as string;
    const rotated = await gql(admin.token, 'mutation($id: ID!) { rotateClientSecret(id: $id) { secret } }', {
      id,
    });
    secrets.push(made.body.data.createClientApplication.secret, rotated.body.data.rotateClientSecret.secret);
    expect((await latest(admin.token, 'client.rotate')).targetId).toBe(id);
    const rows = await s.services.db.sql('SELECT * FROM "AuditEvent"');
    expect(rows.length).toBeGreaterThan(15);
    const stored = JSON.stringify(rows);
    const seen = secrets.filter((x) => x && x.length >= 6 && stored.includes(x));
    expect(seen).toEqual([]);
    // And no hash of one either (the stored hashes are SHA-256 hex).
    const hashes = secrets.filter(Boolean).map((x) => crypto.createHash('sha256').update(x).digest('hex'));
    expect(hashes.filter((h) => stored.includes(h))).toEqual([]);
  });

  it('removes records older than the retention, and keeps the others', async () => {
    await s.services.db.sql(
      `INSERT INTO "AuditEvent" (id, "projectId", at, action, outcome)
        SELECT gen_random_uuid(), $1::uuid, (now() AT TIME ZONE 'UTC') - interval '40 days', 'signin', 'success'
          FROM generate_series(1, 3)`,
      [admin.projectId],
    );
    const before = await countRows();
    const retention = new AuditLog(s.services.db, pino({ level: 'silent' }), 30);
    expect(await retention.prune()).toBeGreaterThanOrEqual(3);
    const left = await countRows();
    expect(left).toBeLessThanOrEqual(before - 3);
    const old = await s.services.db.sql(
      `SELECT id FROM "AuditEvent" WHERE at < (now() AT TIME ZONE 'UTC') - interval '30 days'`,
    );
    expect(old).toEqual([]);
    expect(left).toBeGreaterThan(15);
  });
});
