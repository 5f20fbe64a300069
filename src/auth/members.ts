// A project's members as its admins manage them (issue 24, item 2): the list (role, last sign-in), a role changed,
// a member removed, the pending invitations and their cancellation. Every operation is the caller's project's
// only: another project's ids answer 404, as everywhere; a member (not admin) gets 403. The last admin of a
// project can be neither demoted nor removed (409), checked under a lock on the project's admin rows so two admins
// demoting each other at once cannot both succeed. A changed role or a removal ends the member's sessions in the
// project at once, on every instance: a session's principal (its role) is cached, and must not outlive the change.
// Each change is audited in its transaction.
import type { Database } from '../db/database.js';
import type { Caller } from '../core/caller.js';
import { ApiError, badRequest, forbidden, notFound } from '../core/errors.js';
import type { Invitation } from '../generated/prisma/client.js';
import { actorOf, recordAudit } from './audit.js';
import type { SessionAdmin } from './session-admin.js';
import { isUuid } from './uuid.js';

/** One member of a project, as its admins see it. */
export type MemberRow = {
  id: string;
  userId: string | null;
  clientId: string | null;
  email: string | null;
  admin: boolean;
  createdAt: Date;
  lastSignIn: Date | null;
};

/** The most members one list returns (a page; `offset` for the next). */
export const MEMBERS_PAGE_MAX = 200;

/** A member row with its email and last sign-in (a granted session's start). */
const MEMBER_SELECT = `SELECT m.id, m."userId", m."clientId", u.email, m.admin, m."createdAt",
    (SELECT max(l."createdAt") FROM "Login" l WHERE l."membershipId" = m.id AND l.granted) AS "lastSignIn"
  FROM "ProjectMembership" m LEFT JOIN "User" u ON u.id = m."userId"`;

type LockedMember = { id: string; admin: boolean; userId: string | null; clientId: string | null };

function requireAdmin(caller: Caller, what: string): void {
  if (!caller.admin) throw forbidden(`Only a project admin can ${what}`);
}

function membershipId(id: unknown): string {
  if (!isUuid(id)) throw badRequest('id is not a valid membership id', ['id']);
  return id;
}

/** Manages the members of the caller's project. */
export class Members {
  constructor(
    private readonly db: Database,
    private readonly sessions: SessionAdmin,
  ) {}

  /** The caller's project's members, admins first, then by when they joined. */
  async list(caller: Caller, count = 100, offset = 0): Promise<MemberRow[]> {
    requireAdmin(caller, 'list the members');
    if (!Number.isSafeInteger(count) || count < 1 || count > MEMBERS_PAGE_MAX)
      throw badRequest(`count must be 1 to ${MEMBERS_PAGE_MAX}`, ['count']);
    if (!Number.isSafeInteger(offset) || offset < 0) throw badRequest('offset must be 0 or more', ['offset']);
    return this.db.sql<MemberRow>(
      `${MEMBER_SELECT} WHERE m."projectId" = $1::uuid
        ORDER BY m.admin DESC, m."createdAt", m.id LIMIT $2 OFFSET $3`,
      [caller.projectId, count, offset],
    );
  }

  /** Makes a member an admin or a member; their sessions in the project end. Returns the member. */
  async setRole(caller: Caller, id: unknown, admin: boolean): Promise<MemberRow> {
    requireAdmin(caller, "change a member's role");
    const mid = membershipId(id);
    const ended = await this.db.transaction(async (sql) => {
      const m = await this.lockedMember(sql, caller, mid);
      if (m.admin === admin) return [];
      if (!admin) await this.keepOneAdmin(sql, caller, m, 'demoted');
      await sql(`UPDATE "ProjectMembership" SET admin = $2 WHERE id = $1::uuid`, [mid, admin]);
      const ids = await this.sessions.revokeMembership(
        sql,
        mid,
        caller.loginId,
        admin ? 'promoted' : 'demoted',
      );
      await recordAudit(sql, caller.projectId, {
        action: 'member.role',
        actor: actorOf(caller),
        target: { type: 'membership', id: mid },
        detail: {
          role: admin ? 'admin' : 'member',
          userId: m.userId,
          clientId: m.clientId,
          sessionsEnded: ids.length,
        },
      });
      return ids;
    });
    await this.sessions.announceRevoked(ended);
    return this.one(caller, mid);
  }

  /** Removes a member from the project: their sessions in it end, and their membership is gone. */
  async remove(caller: Caller, id: unknown): Promise<boolean> {
    requireAdmin(caller, 'remove a member');
    const mid = membershipId(id);
    const ended = await this.db.transaction(async (sql) => {
      const m = await this.lockedMember(sql, caller, mid);
      if (m.admin) await this.keepOneAdmin(sql, caller, m, 'removed');
      const ids = await this.sessions.revokeMembership(sql, mid, caller.loginId, 'removed from the project');
      await sql(`DELETE FROM "ProjectMembership" WHERE id = $1::uuid`, [mid]);
      await recordAudit(sql, caller.projectId, {
        action: 'member.remove',
        actor: actorOf(caller),
        target: { type: 'membership', id: mid },
        detail: {
          role: m.admin ? 'admin' : 'member',
          userId: m.userId,
          clientId: m.clientId,
          sessionsEnded: ids.length,
        },
      });
      return ids;
    });
    await this.sessions.announceRevoked(ended);
    return true;
  }

  /** The caller's project's pending (not accepted, declined or expired) invitations, oldest first. */
  async invitations(caller: Caller, ttlSec: number): Promise<Invitation[]> {
    requireAdmin(caller, 'list the invitations');
    return this.db.prisma.invitation.findMany({
      where: {
        projectId: caller.projectId,
        acceptedAt: null,
        declinedAt: null,
        createdAt: { gt: new Date(Date.now() - ttlSec * 1000) },
      },
      orderBy: { createdAt: 'asc' },
      take: MEMBERS_PAGE_MAX,
    });
  }

  /** Cancels a pending invitation of the caller's project (it can no longer be accepted). */
  async cancelInvitation(caller: Caller, id: unknown): Promise<boolean> {
    requireAdmin(caller, 'cancel an invitation');
    if (!isUuid(id)) throw badRequest('id is not a valid invitation id', ['id']);
    await this.db.transaction(async (sql) => {
      const gone = await sql<{ email: string; admin: boolean }>(
        `DELETE FROM "Invitation" WHERE id = $1::uuid AND "projectId" = $2::uuid
            AND "acceptedAt" IS NULL AND "declinedAt" IS NULL RETURNING email, admin`,
        [id, caller.projectId],
      );
      if (gone.length === 0) throw notFound('Invitation not found');
      await recordAudit(sql, caller.projectId, {
        action: 'invitation.cancel',
        actor: actorOf(caller),
        target: { type: 'invitation', id },
        detail: { email: gone[0].email, role: gone[0].admin ? 'admin' : 'member' },
      });
    });
    return true;
  }

  private async one(caller: Caller, mid: string): Promise<MemberRow> {
    const [row] = await this.db.sql<MemberRow>(
      `${MEMBER_SELECT} WHERE m.id = $1::uuid AND m."projectId" = $2::uuid`,
      [mid, caller.projectId],
    );
    if (!row) throw notFound('Member not found');
    return row;
  }

  /** The member row, locked for the transaction; 404 unless it belongs to the caller's project. */
  private async lockedMember(sql: Database['sql'], caller: Caller, mid: string): Promise<LockedMember> {
    const rows = await sql<LockedMember>(
      `SELECT id, admin, "userId", "clientId" FROM "ProjectMembership" WHERE id = $1::uuid AND "projectId" = $2::uuid FOR UPDATE`,
      [mid, caller.projectId],
    );
    if (rows.length === 0) throw notFound('Member not found');
    return rows[0];
  }

  /** 409 when `m` is the project's last admin account (a user's: a client application cannot sign anyone in to
   * administer it). The project's admin rows are locked first, so concurrent changes are judged one at a time. */
  private async keepOneAdmin(
    sql: Database['sql'],
    caller: Caller,
    m: { id: string; userId: string | null },
    what: string,
  ): Promise<void> {
    const admins = await sql<{ id: string }>(
      `SELECT id FROM "ProjectMembership" WHERE "projectId" = $1::uuid AND admin AND "userId" IS NOT NULL
        ORDER BY id FOR UPDATE`,
      [caller.projectId],
    );
    if (m.userId !== null && admins.length <= 1 && admins[0]?.id === m.id)
      throw new ApiError(
        409,
        'conflict',
        `The last admin of a project cannot be ${what}: make another member admin first`,
      );
  }
}
