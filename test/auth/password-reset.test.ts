// Password reset (issue 24, item 3): POST /auth/resetpassword emails a one-time link through a real SMTP server (an
// smtp-server listening on loopback here) with the same answer whether or not the address has an account; the link
// sets a password once, before it expires, through JSON or the server's own page (a form without JavaScript), and
// ends every session of the account; a wrong, used, replaced or expired link gets one answer; requests are throttled;
// without SMTP_URL the request is a 501 naming it.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, signIn, useTestServer, withTestServer } from '../helpers/server.js';
import { addUser, createProject, type Account } from '../helpers/projects.js';

/** Mail the SMTP server received. */
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
  config: {
    smtpUrl: `smtp://127.0.0.1:${smtpPort}`,
    loginThrottle: { perSubjectAndAddress: 4, perAddress: 50, perSubject: 20, windowSec: 60 },
  },
});
let admin: Account;

const json = { 'content-type': 'application/json' };
const requestReset = (email: string) =>
  call(s.base, 'POST', 'auth/resetpassword', { body: { email }, headers: json });
const setPassword = (body: Record<string, string>) =>
  call(s.base, 'POST', 'auth/setpassword', { body, headers: json });
const me = (token: string) => call(s.base, 'GET', 'auth/me', { token });

/** Waits for the mail to `to` and returns its link's id and secret. */
async function linkSentTo(to: string): Promise<{ url: URL; id: string; secret: string }> {
  for (let i = 0; i < 100; i++) {
    const mail = inbox.find((m) => m.to === to);
    if (mail) {
      inbox.splice(inbox.indexOf(mail), 1);
      // Quoted-printable may wrap the line: undo its soft breaks first.
      const text = mail.text.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
      const url = new URL(/(http:\/\/\S+auth\/setpassword\?\S+)/.exec(text)![1]);
      return { url, id: url.searchParams.get('id')!, secret: url.searchParams.get('secret')! };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no mail to ${to}`);
}

beforeAll(async () => {
  admin = await createProject(s.base, s.token, 'Reset project');
});

describe('password reset by email', () => {
  it('mails a link for a known address and nothing for an unknown one, answering both alike', async () => {
    const user = await addUser(s.base, admin.token);
    const known = await requestReset(user.email.toUpperCase());
    const unknown = await requestReset('nobody-here@example.com');
    expect(known.status, known.text).toBe(200);
    expect(unknown.status).toBe(200);
    expect(unknown.text).toBe(known.text);
    const link = await linkSentTo(user.email);
    expect(link.url.origin + link.url.pathname).toBe(`${s.services.config.baseUrl}auth/setpassword`);
    expect(link.secret.length).toBeGreaterThanOrEqual(43);
    await new Promise((r) => setTimeout(r, 200));
    expect(inbox.filter((m) => m.to === 'nobody-here@example.com')).toEqual([]);
  });

  it('the link sets a password once; every session of the account ends; the new password signs in', async () => {
    const user = await addUser(s.base, admin.token);
    await requestReset(user.email);
    const { id, secret } = await linkSentTo(user.email);
    const r = await setPassword({ id, secret, password: 'a reset passphrase' });
    expect(r.status, r.text).toBe(200);
    expect(r.body.issue[0].details.text).toBe('Password set; sign in with it');
    expect((await me(user.token)).status).toBe(401);
    await expect(signIn(s.base, user.email, user.password)).rejects.toThrow(/login failed: 400/);
    expect((await signIn(s.base, user.email, 'a reset passphrase')).access_token).toBeTruthy();
    const again = await setPassword({ id, secret, password: 'yet another passphrase' });
    expect(again.status, again.text).toBe(400);
    expect(again.body.issue[0].details.text).toMatch(/invalid, used or expired/);
  });

  it('a wrong secret, an unknown or malformed id, a replaced or an expired link: one 400, nothing changes', async () => {
    const user = await addUser(s.base, admin.token);
    await requestReset(user.email);
    const first = await linkSentTo(user.email);
    await requestReset(user.email);
    const second = await linkSentTo(user.email);
    const answers = [
      await setPassword({ id: second.id, secret: `${second.secret}x`, password: 'a reset passphrase' }),
      await setPassword({
        id: '00000000-0000-4000-8000-000000000000',
        secret: second.secret,
        password: 'a reset passphrase',
      }),
      await setPassword({ id: 'not-an-id', secret: second.secret, password: 'a reset passphrase' }),
      // Replaced by the second link.
      await setPassword({ id: first.id, secret: first.secret, password: 'a reset passphrase' }),
    ];
    for (const a of answers) {
      expect(a.status, a.text).toBe(400);
      expect(a.body.issue[0].details.text).toMatch(/invalid, used or expired/);
    }
    // Expired: the link's time moved to the past (as PASSWORD_RESET_TTL running out would).
    await s.services.db.prisma.passwordReset.update({
      where: { id: second.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const expired = await setPassword({
      id: second.id,
      secret: second.secret,
      password: 'a reset passphrase',
    });
    expect(expired.status).toBe(400);
    expect((await me(user.token)).status).toBe(200);
    expect((await signIn(s.base, user.email, user.password)).access_token).toBeTruthy();
  });

  it('a password the policy refuses is a 400 naming password, and the link still works', async () => {
    const user = await addUser(s.base, admin.token);
    await requestReset(user.email);
    const { id, secret } = await linkSentTo(user.email);
    const weak = await setPassword({ id, secret, password: 'password1' });
    expect(weak.status, weak.text).toBe(400);
    expect(weak.body.issue[0].expression).toEqual(['password']);
    expect((await setPassword({ id, secret, password: 'a strong passphrase' })).status).toBe(200);
  });

  it('the server’s page: a form without JavaScript, never cached or framed; it reports errors and success', async () => {
    const user = await addUser(s.base, admin.token);
    await requestReset(user.email);
    const { url, id, secret } = await linkSentTo(user.email);
    const page = await fetch(`${s.base}auth/setpassword${url.search}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    const html = await page.text();
    expect(html).toContain('<form method="post" action="setpassword">');
    expect(html).not.toContain('<script');
    const post = (password: string) =>
      fetch(`${s.base}auth/setpassword`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ id, secret, password }).toString(),
      });
    const weak = await post('12345678');
    expect(weak.status).toBe(400);
    const weakHtml = await weak.text();
    expect(weakHtml).toContain('most common passwords');
    expect(weakHtml).toContain('<form');
    const ok = await post('a page-made passphrase');
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('Your password is set');
    expect((await signIn(s.base, user.email, 'a page-made passphrase')).access_token).toBeTruthy();
    // The page escapes what the link carries.
    const hostile = await fetch(`${s.base}auth/setpassword?id=%22%3E%3Cscript%3E&secret=x`);
    expect(await hostile.text()).not.toContain('"><script>');
  });

  it('requests are throttled per address and email (429 + Retry-After), known or not; malformed ones are 400s', async () => {
    for (let i = 0; i < 4; i++) expect((await requestReset('flood@example.com')).status).toBe(200);
    const blocked = await requestReset('flood@example.com');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    const bad = await requestReset('not an address');
    expect(bad.status).toBe(400);
    expect(bad.body.issue[0].expression).toEqual(['email']);
    const missing = await call(s.base, 'POST', 'auth/resetpassword', { body: {}, headers: json });
    expect(missing.status).toBe(400);
  });
});

describe('without SMTP_URL', () => {
  it('POST /auth/resetpassword is a 501 naming SMTP_URL and the CLI', async () => {
    await withTestServer({}, async (plain) => {
      const r = await call(plain.base, 'POST', 'auth/resetpassword', {
        body: { email: 'admin@example.com' },
        headers: json,
      });
      expect(r.status, r.text).toBe(501);
      expect(r.body.issue[0].details.text).toContain('SMTP_URL');
      expect(r.body.issue[0].details.text).toContain('npm run user:reset-link');
    });
  });
});
