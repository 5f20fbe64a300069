// Invitations: how an existing account joins another project. A project admin invites an email address; the answer
// is the same whether or not an account with that address exists (no enumeration), and nothing changes for the
// account until its holder, signed in, sees the invitation in `me` and accepts it. An invitation is acceptable for
// INVITATION_TTL (7 days) after it was made or last renewed; then it is as if it never existed. An invitation, its
// acceptance and its refusal are audited in the inviting project, in their transaction.
import type { Database } from '../db/database.js';
import type { Invitation, Prisma, ProjectMembership } from '../generated/prisma/client.js';
import { badRequest, forbidden, notFound } from '../core/errors.js';
import type { Caller } from '../core/caller.js';
import { actorOf, recordAudit, sqlOf, type AuditActor } from './audit.js';
import { normalizeEmail } from './email.js';
import { isUuid } from './uuid.js';

/** A project admin invites an address to the project (idempotent per project and address; a repeat updates `admin`
 * and renews it). Callers check the admin role and the invitation budget (Accounts.inviteUser). */
export async function inviteUser(
  db: Database,
  caller: Caller,
  email: string,
  admin: boolean,
): Promise<Invitation> {
  if (!caller.admin) throw forbidden('Only a project admin can invite users');
  const normalized = normalizeEmail(email);
  if (!normalized) throw badRequest('email is not a valid address', ['email']);
  // Deliberately no lookup of the account: the answer must not depend on whether it exists.
  return db.prisma.$transaction(async (tx) => {
    const inv = await recordInvitation(tx, caller, normalized, admin);
    await recordAudit(sqlOf(tx), caller.projectId, {
      action: 'member.invite',
      actor: actorOf(caller),
      target: { type: 'invitation', id: inv.id },
      detail: { email: normalized, role: admin ? 'admin' : 'member' },
    });
    return inv;
  });
}

/** Writes (or renews) the invitation of a normalized address to the caller's project. */
export function recordInvitation(
  tx: Prisma.TransactionClient | Database['prisma'],
  caller: Caller,
  normalizedEmail: string,
  admin: boolean,
): Promise<Invitation> {
  return tx.invitation.upsert({
    where: { projectId_email: { projectId: caller.projectId, email: normalizedEmail } },
    create: { projectId: caller.projectId, email: normalizedEmail, admin, invitedBy: caller.userId },
    update: { admin, invitedBy: caller.userId, acceptedAt: null, declinedAt: null, createdAt: new Date() },
  });
}

/** The invited holder as the inviting project's log names them: their account, not their session or client (those
 * belong to another project). */
function invitee(caller: Caller): AuditActor {
  return { ...actorOf(caller), loginId: null, clientId: null };
}

/** Invitations made before this instant have expired. */
const expiredBefore = (ttlSec: number) => new Date(Date.now() - ttlSec * 1000);

/** The pending invitations addressed to the caller's account (empty for a client application). */
export async function pendingInvitations(
  db: Database,
  caller: Caller,
  ttlSec: number,
): Promise<Invitation[]> {
  if (!caller.userId) return [];
  const user = await db.prisma.user.findUnique({ where: { id: caller.userId }, select: { email: true } });
  if (!user) return [];
  return db.prisma.invitation.findMany({
    where: {
      email: user.email,
      acceptedAt: null,
      declinedAt: null,
      createdAt: { gt: expiredBefore(ttlSec) },
    },
    orderBy: { createdAt: 'asc' },
  });
}

/** The caller's own pending, unexpired invitation by id; 404 for any other (never reveals someone else's). */
async function ownPending(db: Database, caller: Caller, id: unknown, ttlSec: number): Promise<Invitation> {
  if (!isUuid(id)) throw badRequest('id is not a valid invitation id', ['id']);
  if (!caller.userId) throw forbidden('Only a user can answer an invitation');
  const user = await db.prisma.user.findUnique({ where: { id: caller.userId }, select: { email: true } });
  const inv = await db.prisma.invitation.findUnique({ where: { id } });
  if (!inv || !user || inv.email !== user.email || inv.acceptedAt || inv.declinedAt)
    throw notFound('Invitation not found');
  if (inv.createdAt <= expiredBefore(ttlSec)) throw notFound('Invitation not found');
  return inv;
}

/** The invited account's holder accepts: they become a member (or admin) of the project; one transaction. */
export async function acceptInvitation(
  db: Database,
  caller: Caller,
  id: unknown,
  ttlSec: number,
): Promise<ProjectMembership> {
  const inv = await ownPending(db, caller, id, ttlSec);
  const userId = caller.userId as string;
  return db.prisma.$transaction(async (tx) => {
    const done = await tx.invitation.updateMany({
      where: { id: inv.id, acceptedAt: null, declinedAt: null },
      data: { acceptedAt: new Date() },
    });
    if (done.count === 0) throw notFound('Invitation not found');
    // In the project the invitation is to; the caller's session (and its client) are another project's.
    await recordAudit(sqlOf(tx), inv.projectId, {
      action: 'invitation.accept',
      actor: invitee(caller),
      target: { type: 'invitation', id: inv.id },
      detail: { email: inv.email, role: inv.admin ? 'admin' : 'member' },
    });
    const existing = await tx.projectMembership.findFirst({ where: { projectId: inv.projectId, userId } });
    // Already a member: accepting changes nothing (an invitation never demotes, and promotes only as offered).
    if (existing) {
      if (!inv.admin || existing.admin) return existing;
      return tx.projectMembership.update({ where: { id: existing.id }, data: { admin: true } });
    }
    return tx.projectMembership.create({ data: { projectId: inv.projectId, userId, admin: inv.admin } });
  });
}

/** The invited account's holder declines; the invitation is closed. */
export async function declineInvitation(
  db: Database,
  caller: Caller,
  id: unknown,
  ttlSec: number,
): Promise<boolean> {
  const inv = await ownPending(db, caller, id, ttlSec);
  await db.prisma.$transaction(async (tx) => {
    await tx.invitation.update({ where: { id: inv.id }, data: { declinedAt: new Date() } });
    await recordAudit(sqlOf(tx), inv.projectId, {
      action: 'invitation.decline',
      actor: invitee(caller),
      target: { type: 'invitation', id: inv.id },
      detail: { email: inv.email },
    });
  });
  return true;
}
