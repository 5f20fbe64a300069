// Brute force (issue 12 item 6): failed sign-ins and client-secret checks are throttled per account/client and
// address, per address and per account (429 + Retry-After), with no lockout outlasting its window; passwords are
// hashed with scrypt N=2^17 by default and older hashes are upgraded at the next sign-in.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { passwordHasher } from '../../src/auth/passwords.js';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  CLIENT_ID,
  CLIENT_SECRET,
  call,
  signIn,
  useTestServer,
  withTestServer,
} from '../helpers/server.js';
import { addUser } from '../helpers/projects.js';

const WINDOW_SEC = 3;
// Small limits so the test runs in seconds; the defaults are asserted below.
const limits = { perSubjectAndAddress: 3, perAddress: 8, perSubject: 6, windowSec: WINDOW_SEC };
const s = useTestServer({ config: { trustProxy: true, loginThrottle: limits, clientAuthThrottle: limits } });

function login(email: string, password: string, from: string) {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return call(s.base, 'POST', 'auth/login', {
    body: {
      email,
      password,
      codeChallenge: crypto.createHash('sha256').update(verifier).digest('base64url'),
      codeChallengeMethod: 'S256',
    },
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
  });
}

function clientToken(secret: string, from: string) {
  return call(s.base, 'POST', 'oauth2/token', {
    raw: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: CLIENT_ID,
      client_secret: secret,
    }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': from },
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('sign-in throttling', () => {
  it('one address guessing one account gets 429 + Retry-After; the holder elsewhere signs in; the back-off ends', async () => {
    const user = await addUser(s.base, (await signIn(s.base)).access_token);
    for (let i = 0; i < limits.perSubjectAndAddress; i++) {
      expect((await login(user.email, `wrong-${i}`, '198.51.100.1')).status).toBe(400);
    }
    const blocked = await login(user.email, 'wrong-again', '198.51.100.1');
    expect(blocked.status).toBe(429);
    expect(blocked.body.resourceType).toBe('OperationOutcome');
    expect(blocked.body.issue[0].code).toBe('throttled');
    const retryAfter = Number(blocked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SEC);
    // Even the right password is refused from that address until the back-off ends (the guesser learns nothing).
    expect((await login(user.email, user.password, '198.51.100.1')).status).toBe(429);
    // The holder, from another address, signs in meanwhile.
    expect((await login(user.email, user.password, '203.0.113.7')).status).toBe(200);
    // After the back-off, the first address works again: no permanent lockout.
    await sleep(retryAfter * 1000 + 200);
    expect((await login(user.email, user.password, '198.51.100.1')).status).toBe(200);
  });

  it('one address spraying many accounts is throttled per address (unknown accounts count the same)', async () => {
    for (let i = 0; i < limits.perAddress; i++) {
      const r = await login(`spray-${i}@nowhere.example`, 'password-1', '198.51.100.2');
      expect(r.status).toBe(400);
    }
    const r = await login(ADMIN_EMAIL, ADMIN_PASSWORD, '198.51.100.2');
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await login(ADMIN_EMAIL, ADMIN_PASSWORD, '198.51.100.3')).status).toBe(200);
  });

  it('many addresses on one account: the account waits at most one window, then its holder signs in', async () => {
    const user = await addUser(s.base, (await signIn(s.base)).access_token);
    for (let i = 0; i < limits.perSubject; i++) {
      expect((await login(user.email, 'wrong', `192.0.2.${10 + i}`)).status).toBe(400);
    }
    const r = await login(user.email, user.password, '192.0.2.200');
    expect(r.status).toBe(429);
    await sleep(Number(r.headers.get('retry-after')) * 1000 + 200);
    expect((await login(user.email, user.password, '192.0.2.200')).status).toBe(200);
  });
});

describe('client secret throttling', () => {
  it('guessing a client secret gets 429 + Retry-After (OAuth2 JSON); the client elsewhere still authenticates', async () => {
    for (let i = 0; i < limits.perSubjectAndAddress; i++) {
      const r = await clientToken(`guess-${i}`, '198.51.100.9');
      expect(r.status).toBe(401);
      expect(r.body.error).toBe('invalid_client');
    }
    const blocked = await clientToken(CLIENT_SECRET, '198.51.100.9');
    expect(blocked.status).toBe(429);
    expect(blocked.body.error).toBe('temporarily_unavailable');
    expect(blocked.body.error_description).toMatch(/client authentication/);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await clientToken(CLIENT_SECRET, '203.0.113.9')).status).toBe(200);
  });
});

describe('password hashing cost', () => {
  it('the production default is scrypt N=2^15, r=8, p=3 (OWASP: as strong as N=2^17, p=1, in a quarter of the memory), with bounded concurrency', async () => {
    const saved = [process.env.PASSWORD_HASH_COST, process.env.PASSWORD_HASH_PARALLELISM];
    delete process.env.PASSWORD_HASH_COST;
    delete process.env.PASSWORD_HASH_PARALLELISM;
    try {
      const config = loadConfig(process.env);
      expect(config.passwordHashCost).toBe(15);
      expect(config.passwordHashParallelism).toBe(3);
      expect(config.passwordHashConcurrency).toBe(2);
      expect(config.loginThrottle).toEqual({
        perSubjectAndAddress: 5,
        perAddress: 50,
        perSubject: 20,
        windowSec: 900,
      });
      const hasher = passwordHasher({ ...config, passwordHashConcurrency: 1 });
      const hash = await hasher.hash('x'.repeat(12));
      expect(hash).toMatch(/^scrypt\$32768\$8\$3\$/);
      expect(await hasher.verify('x'.repeat(12), hash)).toEqual({ ok: true, rehash: false });
    } finally {
      if (saved[0] !== undefined) process.env.PASSWORD_HASH_COST = saved[0];
      if (saved[1] !== undefined) process.env.PASSWORD_HASH_PARALLELISM = saved[1];
    }
  }, 90_000);

  it('a hash made with other parameters is replaced at the next sign-in, transparently', async () => {
    // Replaced with the server's parameters (N=2^15 and p=1 here, to spare the shared test machine).
    await withTestServer({ config: { passwordHashCost: 15 } }, async (strong) => {
      // The admin's hash as the previous release stored it by default: N=2^17, p=1 (128 MiB).
      const salt = crypto.randomBytes(16);
      const old = crypto.scryptSync(ADMIN_PASSWORD, salt, 32, {
        N: 131072,
        r: 8,
        p: 1,
        maxmem: 256 * 1024 * 1024,
      });
      const oldHash = ['scrypt', 131072, 8, 1, salt.toString('base64url'), old.toString('base64url')].join(
        '$',
      );
      await strong.services.db.prisma.user.update({
        where: { email: ADMIN_EMAIL },
        data: { passwordHash: oldHash },
      });
      await signIn(strong.base);
      const row = await strong.services.db.prisma.user.findUnique({ where: { email: ADMIN_EMAIL } });
      expect(row?.passwordHash).toMatch(/^scrypt\$32768\$8\$1\$/);
      // The same password keeps working against the new hash.
      expect((await signIn(strong.base)).access_token).toBeTruthy();
    });
  }, 120_000);
});
