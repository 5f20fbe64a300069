// Session administration: ending a session (on every instance), which sessions a caller may end, and the list of a
// caller's active sessions. An ended session is audited in its project (`signout` for a logout, `session.revoke`
// otherwise, with the system as actor for a replayed code or refresh token); the sessions a larger action ends are
// counted in that action's record instead.
import type { Database } from '../db/database.js';
import type { Caller } from '../core/caller.js';
import { badRequest, notFound } from '../core/errors.js';
import { actorOf, recordAudit, type AuditActor } from './audit.js';
import type { SessionCache } from './session-cache.js';
import { isUuid } from './uuid.js';

/** An active session as listed by /auth/me. */
export type SessionRow = {
  id: string;
  userAgent: string | null;
  remoteAddress: string | null;
  authMethod: string;
  createdAt: Date;
  lastUsed: Date | null;
};

/** Ends and lists sessions (Logins). */
export class SessionAdmin {
  constructor(
    private readonly db: Database,
    private readonly cache: SessionCache,
  ) {}

  /** Revokes a Login (idempotent; audited once, as `actor` did it: none for the system); every instance refuses its
   * tokens from the next request on. */
  async revoke(loginId: string, revokedBy: string, reason: string, actor: AuditActor = {}): Promise<void> {
    await this.db.transaction(async (sql) => {
      const ended = await sql<{ projectId: string; userId: string | null; clientId: string | null }>(
        `UPDATE "Login" SET "revokedAt" = now(), "revokedBy" = $2, "revokedReason" = $3
          WHERE id = $1 AND "revokedAt" IS NULL RETURNING "projectId", "userId", "clientId"`,
        [loginId, revokedBy, reason],
      );
      if (ended.length === 0) return;
      const s = ended[0];
      await recordAudit(sql, s.projectId, {
        action: reason === 'logout' ? 'signout' : 'session.revoke',
        actor,
        target: { type: 'session', id: loginId },
        detail: { reason, userId: s.userId, clientId: s.userId ? null : s.clientId },
      });
    });
    this.cache.markRevoked(loginId);
    await this.cache.announce(loginId);
  }

  /** Revokes every session of a membership (a changed role, a removal) with `sql` (a transaction's); returns their
   * ids, for announceRevoked once it has committed. */
  async revokeMembership(
    sql: Database['sql'],
    membershipId: string,
    revokedBy: string,
    reason: string,
  ): Promise<string[]> {
    const ended = await sql<{ id: string }>(
      `UPDATE "Login" SET "revokedAt" = now(), "revokedBy" = $2, "revokedReason" = $3
        WHERE "membershipId" = $1::uuid AND "revokedAt" IS NULL RETURNING id`,
      [membershipId, revokedBy, reason],
    );
    return ended.map((r) => r.id);
  }

  /** Revokes every session made by or through a client application (its own client_credentials sessions, and users'
   * sign-ins that named it) with `sql`; returns their ids, for announceRevoked once it has committed. */
  async revokeClient(
    sql: Database['sql'],
    clientId: string,
    revokedBy: string,
    reason: string,
  ): Promise<string[]> {
    const ended = await sql<{ id: string }>(
      `UPDATE "Login" SET "revokedAt" = now(), "revokedBy" = $2, "revokedReason" = $3
        WHERE "clientId" = $1::uuid AND "revokedAt" IS NULL RETURNING id`,
      [clientId, revokedBy, reason],
    );
    return ended.map((r) => r.id);
  }

  /** Revokes every session of a user (in every project), but `except` (the session making the change), with `sql`
   * (a transaction's): a changed or reset password. Returns their ids, for announceRevoked once it has committed. */
  async revokeUser(
    sql: Database['sql'],
    userId: string,
    revokedBy: string,
    reason: string,
    except?: string,
  ): Promise<string[]> {
    const ended = await sql<{ id: string }>(
      `UPDATE "Login" SET "revokedAt" = now(), "revokedBy" = $2, "revokedReason" = $3
        WHERE "userId" = $1::uuid AND "revokedAt" IS NULL AND ($4::uuid IS NULL OR id <> $4::uuid) RETURNING id`,
      [userId, revokedBy, reason, except ?? null],
    );
    return ended.map((r) => r.id);
  }

  /** Announces revoked (or deleted) Logins: every instance refuses their tokens from the next request on. */
  async announceRevoked(loginIds: readonly string[]): Promise<void> {
    for (const id of loginIds) this.cache.markRevoked(id);
    await Promise.all(loginIds.map((id) => this.cache.announce(id)));
  }

  /** The Login row a caller may act on: their own user's, or (for a project admin) a member's of that project. */
  async findRevocable(caller: Caller, loginId: unknown): Promise<string> {
    if (typeof loginId !== 'string' || !loginId) throw badRequest('loginId is required', ['loginId']);
    if (!isUuid(loginId)) throw badRequest('loginId is not a valid login id', ['loginId']);
    const login = await this.db.prisma.login.findUnique({ where: { id: loginId } });
    if (!login) throw notFound('Login not found');
    // A client application's own sessions are its client_credentials logins, not users' logins made through it.
    const own = caller.userId
      ? login.userId === caller.userId
      : login.userId === null && login.clientId === caller.clientId;
    const asAdmin = caller.admin && login.projectId === caller.projectId;
    // Never reveal that another user's session exists.
    if (!own && !asAdmin) throw notFound('Login not found');
    return login.id;
  }

  /** The active sessions (not revoked, not expired, tokens issued) of the caller's user or client. */
  async active(caller: Caller): Promise<SessionRow[]> {
    // Raw SQL: this runs on every /auth/me.
    const owner = caller.userId ? `"userId" = $1` : `"clientId" = $1 AND "userId" IS NULL`;
    return this.db.sql<SessionRow>(
      `SELECT id, "userAgent", "remoteAddress", "authMethod", "createdAt", "lastUsed" FROM "Login"
        WHERE ${owner} AND "revokedAt" IS NULL AND granted AND "expiresAt" > now()
        ORDER BY "createdAt" DESC`,
      [caller.userId ?? caller.clientId],
    );
  }

  /** Ends every session of the caller's user but the current one; returns how many. */
  async revokeOthers(caller: Caller): Promise<number> {
    const others = (await this.active(caller)).filter((l) => l.id !== caller.loginId);
    const actor = actorOf(caller);
    await Promise.all(others.map((l) => this.revoke(l.id, caller.loginId, 'revokeOtherSessions', actor)));
    return others.length;
  }
}
