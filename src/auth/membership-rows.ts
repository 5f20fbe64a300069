// The account rows /auth/me shows, for a batch of membership ids. Raw SQL on purpose: this is a hot path, where an
// ORM round trip costs ~10x a plain query on the embedded database; one query returns membership, project and user.
import type { Database } from '../db/database.js';
import type { Project, ProjectMembership, User } from '../generated/prisma/client.js';

/** A membership with its project and (for a user's membership) its user. */
export interface MembershipRows {
  membership: ProjectMembership;
  project: Project;
  user: User | null;
  /** The user has a confirmed second factor. */
  mfaEnrolled: boolean;
}

type JoinedRow = {
  m_id: string;
  m_admin: boolean;
  m_project: string;
  m_user: string | null;
  m_client: string | null;
  m_created: Date;
  p_name: string;
  p_created: Date;
  p_mfa: boolean;
  u_email: string | null;
  u_hash: string | null;
  u_first: string | null;
  u_last: string | null;
  u_server_admin: boolean | null;
  u_created: Date | null;
  u_mfa: boolean | null;
};

/** Membership, project and user for each membership id (null for an id with no membership); one query. */
export async function membershipRows(
  db: Database,
  ids: readonly string[],
): Promise<Array<MembershipRows | null>> {
  const rows = await db.sql<JoinedRow>(
    `SELECT m.id AS m_id, m.admin AS m_admin, m."projectId" AS m_project, m."userId" AS m_user,
            m."clientId" AS m_client, m."createdAt" AS m_created, p.name AS p_name, p."createdAt" AS p_created,
            p."mfaRequired" AS p_mfa,
            u.email AS u_email, u."passwordHash" AS u_hash, u."firstName" AS u_first, u."lastName" AS u_last,
            u."serverAdmin" AS u_server_admin, u."createdAt" AS u_created,
            f.enrolled AS u_mfa
       FROM "ProjectMembership" m
       JOIN "Project" p ON p.id = m."projectId"
       LEFT JOIN "User" u ON u.id = m."userId"
       LEFT JOIN "UserMfa" f ON f."userId" = m."userId"
      WHERE m.id = ANY($1::uuid[])`,
    [ids],
  );
  const map = new Map(rows.map((r) => [r.m_id, toRows(r)]));
  return ids.map((id) => map.get(id) ?? null);
}

function toRows(r: JoinedRow): MembershipRows {
  return {
    membership: {
      id: r.m_id,
      projectId: r.m_project,
      userId: r.m_user,
      clientId: r.m_client,
      admin: r.m_admin,
      createdAt: r.m_created,
    },
    project: { id: r.m_project, name: r.p_name, createdAt: r.p_created, mfaRequired: r.p_mfa === true },
    mfaEnrolled: r.u_mfa === true,
    user:
      r.m_user && r.u_email !== null
        ? {
            id: r.m_user,
            email: r.u_email,
            passwordHash: r.u_hash ?? '',
            firstName: r.u_first,
            lastName: r.u_last,
            serverAdmin: r.u_server_admin === true,
            createdAt: r.u_created ?? r.m_created,
          }
        : null,
  };
}
