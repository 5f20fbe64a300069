// Reading the audit log in tests (auditEvents through /graphql), and requests that say where they come from: the
// audit tests send every request from FROM with UA (the server trusts the proxy header) and check both are recorded.
import crypto from 'node:crypto';
import { expect } from 'vitest';
import { call, type UsedTestServer } from './server.js';

/** The address and user agent the audit tests' requests carry. */
export const FROM = '203.0.113.9';
export const UA = 'AuditTest/1.0 (vitest)';
export const AUDIT_HEADERS = {
  'content-type': 'application/json',
  'x-forwarded-for': FROM,
  'user-agent': UA,
};

/** One record as auditEvents answers it. */
export type AuditEvent = {
  id: string;
  at: string;
  action: string;
  outcome: string;
  actorUserId: string | null;
  actorLoginId: string | null;
  actorClientId: string | null;
  targetType: string | null;
  targetId: string | null;
  remoteAddress: string | null;
  userAgent: string | null;
  detail: Record<string, unknown> | null;
};

export type AuditPage = { events: AuditEvent[]; nextCursor: string | null };

export const AUDIT_EVENTS = `query($first: Int, $after: String, $action: String, $actor: ID) {
  auditEvents(first: $first, after: $after, action: $action, actor: $actor) {
    events { id at action outcome actorUserId actorLoginId actorClientId targetType targetId remoteAddress userAgent
             detail }
    nextCursor
  }
}`;

/** GraphQL, REST and audit-log reads against `s`, every request from FROM with UA. */
export function auditRequests(s: UsedTestServer) {
  const gql = (token: string | undefined, query: string, variables: Record<string, unknown> = {}) =>
    call(s.base, 'POST', 'graphql', { token, body: { query, variables }, headers: AUDIT_HEADERS });
  const post = (path: string, body: unknown, token?: string) =>
    call(s.base, 'POST', path, { token, body, headers: AUDIT_HEADERS });

  /** A page of the audit log as `token`'s project admin reads it. */
  async function page(token: string, vars: Record<string, unknown> = {}): Promise<AuditPage> {
    const r = await gql(token, AUDIT_EVENTS, vars);
    expect(r.status, r.text).toBe(200);
    return r.body.data.auditEvents as AuditPage;
  }

  /** The newest record of `action` in `token`'s project; unless `viaRequest` is false, it came from FROM with UA. */
  async function latest(token: string, action: string, viaRequest = true): Promise<AuditEvent> {
    const [e] = (await page(token, { action, first: 1 })).events;
    expect(e, `no ${action} event`).toBeDefined();
    if (viaRequest) expect([e.remoteAddress, e.userAgent]).toEqual([FROM, UA]);
    return e;
  }

  /** POST /auth/login with PKCE; the answer and the verifier. */
  async function login(email: string, password: string) {
    const verifier = crypto.randomBytes(32).toString('base64url');
    const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
    const r = await post('auth/login', {
      email,
      password,
      codeChallenge: challenge,
      codeChallengeMethod: 'S256',
    });
    return { ...r, verifier };
  }

  /** Audit rows of every project. */
  const countRows = async () =>
    Number((await s.services.db.sql<{ n: number }>('SELECT count(*)::int AS n FROM "AuditEvent"'))[0].n);

  return { gql, post, page, latest, login, countRows };
}
