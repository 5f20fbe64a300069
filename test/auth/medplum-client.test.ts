// The real @medplum/core MedplumClient, unmodified, against the server: password + PKCE sign-in, profile, FHIR
// calls, client credentials, token refresh (offline_access and on access-token expiry) and sign-out.
import crypto from 'node:crypto';
import { ClientStorage, MedplumClient, MemoryStorage } from '@medplum/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  CLIENT_ID,
  CLIENT_SECRET,
  call,
  useTestServer,
} from '../helpers/server.js';

const s = useTestServer();

beforeAll(async () => {
  // The client's expected warning on Node (its S256 path needs window.btoa; it falls back to 'plain', which these
  // tests are about) printed a ReferenceError stack per sign-in. Only that warning is dropped; others still print.
  const warn = console.warn.bind(console);
  vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith('Failed to hash code verifier')) return;
    warn(...args);
  });
});
afterAll(async () => {
  vi.restoreAllMocks();
});

function client(base: string, extra: Record<string, unknown> = {}): MedplumClient {
  return new MedplumClient({
    baseUrl: base,
    fetch: globalThis.fetch.bind(globalThis),
    ...extra,
  });
}

describe('MedplumClient', () => {
  it('signs in with email/password (PKCE), reads the profile, calls FHIR, and signs out', async () => {
    const medplum = client(s.base);
    const login = await medplum.startLogin({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    expect(login.login).toBeTruthy();
    expect(login.code).toBeTruthy();
    // The compatibility fact behind PKCE_ALLOW_PLAIN: on Node, MedplumClient's S256 path needs window.btoa, so it
    // falls back to 'plain' (with a 128-character hex verifier, which RFC 7636 4.1 accepts).
    const row = await s.services.db.prisma.login.findUnique({ where: { id: login.login } });
    expect(row?.codeChallengeMethod).toBe('plain');
    expect(row?.codeChallenge).toMatch(/^[0-9a-f]{128}$/);
    const profile = await medplum.processCode(login.code!);
    expect(profile?.resourceType).toBe('Practitioner');
    expect(medplum.isAuthenticated()).toBe(true);
    expect(medplum.getProfile()?.resourceType).toBe('Practitioner');
    expect(medplum.getProject()?.id).toBeTruthy();
    expect(medplum.getProjectMembership()?.admin).toBe(true);
    const me = await medplum.get('auth/me', { cache: 'no-cache' });
    expect(me.security.sessions.some((x: { current: boolean }) => x.current)).toBe(true);

    // FHIR: create, read and search through the client.
    const bot = await medplum.createResource({ resourceType: 'Bot', name: 'medplum-client-test-bot' });
    expect(bot.id).toBeTruthy();
    const read = await medplum.readResource('Bot', bot.id!);
    expect(read.name).toBe('medplum-client-test-bot');
    const bundle = await medplum.search('Bot', { name: 'medplum-client-test-bot' });
    expect(bundle.resourceType).toBe('Bundle');
    expect(bundle.entry?.map((e: { resource?: { id?: string } }) => e.resource?.id)).toContain(bot.id);

    const token = medplum.getAccessToken()!;
    await medplum.signOut();
    expect(medplum.getAccessToken()).toBeUndefined();
    const after = await call(s.base, 'GET', 'auth/me', { token });
    expect(after.status).toBe(401);
  });

  it('PKCE S256 (what a browser sends) works through the client', async () => {
    // On Node the client's own S256 hashing needs window.btoa and falls back to 'plain' (also accepted); here the
    // challenge is made as a browser would, and the verifier placed where processCode reads it.
    const storage = new ClientStorage(new MemoryStorage());
    const medplum = client(s.base, { storage });
    const verifier = crypto.randomBytes(48).toString('base64url');
    storage.setString('codeVerifier', verifier);
    const codeChallenge = crypto.createHash('sha256').update(verifier).digest('base64url');
    const login = await medplum.startLogin({
      email: ADMIN_EMAIL,
      password: ADMIN_PASSWORD,
      codeChallenge,
      codeChallengeMethod: 'S256',
    });
    const row = await s.services.db.prisma.login.findUnique({ where: { id: login.login } });
    expect(row?.codeChallengeMethod).toBe('S256');
    const profile = await medplum.processCode(login.code!);
    expect(profile?.resourceType).toBe('Practitioner');
    await medplum.signOut();
  });

  it('a client created with a clientId gets a token whose client_id matches (the client checks it)', async () => {
    const medplum = client(s.base, { clientId: CLIENT_ID });
    // A named client is confidential and authenticates at the token endpoint (RFC 6749 3.2.1): MedplumClient
    // sends HTTP Basic on the code exchange once it knows the secret.
    medplum.setBasicAuth(CLIENT_ID, CLIENT_SECRET);
    const login = await medplum.startLogin({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    const profile = await medplum.processCode(login.code!);
    expect(profile?.resourceType).toBe('Practitioner');
    const row = await s.services.db.prisma.login.findUnique({ where: { id: login.login } });
    expect(row?.userId).toBeTruthy();
    await medplum.signOut();
  });

  it('a wrong password rejects startLogin with the server message', async () => {
    const medplum = client(s.base);
    await expect(medplum.startLogin({ email: ADMIN_EMAIL, password: 'wrong-password' })).rejects.toThrow(
      /email or password/i,
    );
  });

  it('signs in with client credentials and searches', async () => {
    const medplum = client(s.base);
    const profile = await medplum.startClientLogin(CLIENT_ID, CLIENT_SECRET);
    expect(profile?.resourceType).toBe('ClientApplication');
    const bundle = await medplum.search('Bot');
    expect(bundle.resourceType).toBe('Bundle');
  });

  it('client credentials with a wrong secret is rejected', async () => {
    const medplum = client(s.base);
    await expect(medplum.startClientLogin(CLIENT_ID, 'wrong')).rejects.toThrow();
    expect(medplum.isAuthenticated()).toBe(false);
  });

  it('refreshes with the rotated refresh token (offline_access); the old refresh token is refused', async () => {
    const medplum = client(s.base);
    const login = await medplum.startLogin({
      email: ADMIN_EMAIL,
      password: ADMIN_PASSWORD,
      scope: 'openid offline_access',
    });
    await medplum.processCode(login.code!);
    const firstAccess = medplum.getAccessToken()!;
    const firstRefresh = medplum.getActiveLogin()?.refreshToken ?? '';
    expect(firstRefresh).toBeTruthy();
    // refreshIfExpired with a grace period longer than the token's life forces the refresh path.
    await medplum.refreshIfExpired(24 * 3600 * 1000);
    expect(medplum.getAccessToken()).not.toBe(firstAccess);
    expect(medplum.getActiveLogin()?.refreshToken).not.toBe(firstRefresh);
    const me = await medplum.get('auth/me', { cache: 'no-cache' });
    expect(me.profile.resourceType).toBe('Practitioner');
    const replay = await call(s.base, 'POST', 'oauth2/token', {
      raw: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: firstRefresh }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(replay.body.error).toBe('invalid_grant');
    // A replayed refresh token ends the session (RFC 9700 4.14.2): the client's current token is refused too.
    expect((await call(s.base, 'GET', 'auth/me', { token: medplum.getAccessToken() })).status).toBe(401);
  });
});

describe('MedplumClient with short-lived access tokens', () => {
  const short = useTestServer({ config: { accessTokenLifetimeSec: 1 } });

  it('refreshes transparently when the access token has expired', async () => {
    const medplum = client(short.base, { refreshGracePeriod: 0 });
    const login = await medplum.startLogin({
      email: ADMIN_EMAIL,
      password: ADMIN_PASSWORD,
      scope: 'openid offline_access',
    });
    await medplum.processCode(login.code!);
    const firstAccess = medplum.getAccessToken()!;
    // Lifetimes are whole seconds rounded up: a 1 s token lives 1-2 s.
    await new Promise((r) => setTimeout(r, 2100));
    expect((await call(short.base, 'GET', 'auth/me', { token: firstAccess })).status).toBe(401);
    const bundle = await medplum.search('Bot');
    expect(bundle.resourceType).toBe('Bundle');
    expect(medplum.getAccessToken()).not.toBe(firstAccess);
    // Same session: the Login is the one created at sign-in.
    const me = await medplum.get('auth/me', { cache: 'no-cache' });
    expect(me.security.sessions.find((x: { current: boolean }) => x.current).id).toBe(login.login);
    await medplum.signOut();
    expect((await call(short.base, 'GET', 'auth/me', { token: firstAccess })).status).toBe(401);
  });
});
