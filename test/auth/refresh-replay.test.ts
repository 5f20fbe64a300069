// Refresh-token replay (RFC 9700 4.14.2, OAuth 2.1 4.3.1): presenting a rotated-away refresh token is taken as
// theft, so the whole session ends: its current access token and its current refresh token stop working.
import { describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, call, signIn, useTestServer } from '../helpers/server.js';

const s = useTestServer();

function refresh(refreshToken: string) {
  return call(s.base, 'POST', 'oauth2/token', {
    raw: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}

describe('refresh-token replay', () => {
  it('replaying a rotated refresh token revokes the session: access and current refresh token die', async () => {
    const t = await signIn(s.base, ADMIN_EMAIL, ADMIN_PASSWORD, { scope: 'openid offline_access' });
    const r1 = await refresh(t.refresh_token!);
    expect(r1.status).toBe(200);
    // The legitimate client keeps using its new tokens.
    expect((await call(s.base, 'GET', 'auth/me', { token: r1.body.access_token })).status).toBe(200);

    // An attacker replays the stolen, already rotated token.
    const replay = await refresh(t.refresh_token!);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect(replay.body.error_description).toMatch(/replay|already used/i);

    // The whole session is gone: the newest access token and the newest refresh token are refused.
    const me = await call(s.base, 'GET', 'auth/me', { token: r1.body.access_token });
    expect(me.status).toBe(401);
    const next = await refresh(r1.body.refresh_token);
    expect(next.status).toBe(400);
    expect(next.body.error).toBe('invalid_grant');
    const row = await s.services.db.prisma.login.findUnique({ where: { id: t.loginId } });
    expect(row?.revokedAt).toBeInstanceOf(Date);
    expect(row?.revokedReason).toMatch(/replay/);
  });

  it('the same holds when the replay comes before the legitimate client refreshes again', async () => {
    const t = await signIn(s.base, ADMIN_EMAIL, ADMIN_PASSWORD, { scope: 'openid offline_access' });
    // The attacker refreshes first with a stolen token; the legitimate client then presents the same token.
    const stolen = await refresh(t.refresh_token!);
    expect(stolen.status).toBe(200);
    const legit = await refresh(t.refresh_token!);
    expect(legit.status).toBe(400);
    // The attacker's tokens die with the session.
    expect((await call(s.base, 'GET', 'auth/me', { token: stolen.body.access_token })).status).toBe(401);
    expect((await refresh(stolen.body.refresh_token)).status).toBe(400);
  });

  it('other sessions of the same user are not affected', async () => {
    const victim = await signIn(s.base, ADMIN_EMAIL, ADMIN_PASSWORD, { scope: 'openid offline_access' });
    const other = await signIn(s.base);
    const r1 = await refresh(victim.refresh_token!);
    expect(r1.status).toBe(200);
    expect((await refresh(victim.refresh_token!)).status).toBe(400);
    expect((await call(s.base, 'GET', 'auth/me', { token: other.access_token })).status).toBe(200);
  });
});
