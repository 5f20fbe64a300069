// A project's client applications as its admins manage them (issue 24): create one (confidential, with a secret
// shown once and stored as its SHA-256 only; or public, PKCE only), list, rename or re-register its redirect URIs,
// rotate its secret (the previous one still accepted for CLIENT_SECRET_ROTATION_GRACE), delete it (every session
// made by or through it ends at once, on every instance, as a removed member's do). Another project's ids answer
// 404, as everywhere; a member (not admin) gets 403. Each client acts in the project through its own membership
// (a member unless created as an admin; setMemberRole changes it). Each change is audited in its transaction
// (never a secret nor its hash).
import type { Database } from '../db/database.js';
import type { Caller } from '../core/caller.js';
import { ApiError, badRequest, forbidden, notFound } from '../core/errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import { actorOf, recordAudit, sqlOf } from './audit.js';
import { randomSecret, sha256 } from './passwords.js';
import { checkRedirectUris } from './redirect-uris.js';
import type { SessionAdmin } from './session-admin.js';
import { isUuid } from './uuid.js';
import { hasLoneSurrogate } from '../core/unicode.js';

/** A client application as its project's admins see it: never its secret nor a hash of it. */
export type ClientAppRow = {
  id: string;
  name: string;
  public: boolean;
  redirectUris: string[];
  createdAt: Date;
  lastUsed: Date | null;
  /** Until when the secret replaced by the last rotation is still accepted (null: none is). */
  previousSecretExpiresAt: Date | null;
  /** The client's membership of the project (its role), null only if it was removed. */
  membership: { id: string; admin: boolean } | null;
};

/** A client and its new secret (null for a public client): the only answers that carry a secret. */
export interface ClientWithSecret {
  client: ClientAppRow;
  secret: string | null;
}

/** What a new client application is. */
export interface NewClient {
  name: string;
  redirectUris?: readonly unknown[];
  /** A public client has no secret (a browser or native app: PKCE only). */
  public?: boolean;
  /** Its membership is a project admin's (default: a member's). */
  admin?: boolean;
}

/** Longest client name accepted. */
export const MAX_CLIENT_NAME = 200;
/** Most client applications one project holds (a list is one answer, never paged). */
export const MAX_CLIENTS_PER_PROJECT = 100;

type Tx = Prisma.TransactionClient | Database['prisma'];

const ROW_SELECT = {
  id: true,
  name: true,
  public: true,
  redirectUris: true,
  createdAt: true,
  lastUsed: true,
  previousSecretExpiresAt: true,
  projectId: true,
  memberships: { select: { id: true, admin: true, projectId: true } },
} as const;

type SelectedRow = Prisma.ClientApplicationGetPayload<{ select: typeof ROW_SELECT }>;

function toRow(c: SelectedRow): ClientAppRow {
  const m = c.memberships.find((x) => x.projectId === c.projectId);
  const prev = c.previousSecretExpiresAt;
  return {
    id: c.id,
    name: c.name,
    public: c.public,
    redirectUris: c.redirectUris,
    createdAt: c.createdAt,
    lastUsed: c.lastUsed,
    previousSecretExpiresAt: prev && prev.getTime() > Date.now() ? prev : null,
    membership: m ? { id: m.id, admin: m.admin } : null,
  };
}

function requireAdmin(caller: Caller, what: string): void {
  if (!caller.admin) throw forbidden(`Only a project admin can ${what}`);
}

function clientId(id: unknown): string {
  if (!isUuid(id)) throw badRequest('id is not a valid client application id', ['id']);
  return id;
}

// eslint-disable-next-line no-control-regex -- this is the check for them
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

function clientName(name: unknown): string {
  const n = typeof name === 'string' ? name.trim() : '';
  if (n.length === 0 || n.length > MAX_CLIENT_NAME)
    throw badRequest(`name must be 1-${MAX_CLIENT_NAME} characters`, ['name']);
  if (CONTROL_CHARS.test(n)) throw badRequest('name must not contain control characters', ['name']);
  if (hasLoneSurrogate(n))
    throw badRequest('name is not well-formed Unicode (it holds a lone surrogate)', ['name']);
  return n;
}

/** Creates a client application and its membership in `projectId` with `tx` (a transaction's, or createProject's);
 * returns its id and secret. The caller checks the project's client count. */
export async function insertClient(
  tx: Tx,
  projectId: string,
  input: { name: string; redirectUris: string[]; public: boolean; admin: boolean },
): Promise<{ id: string; secret: string | null }> {
  const secret = input.public ? null : randomSecret();
  const app = await tx.clientApplication.create({
    data: {
      projectId,
      name: input.name,
      public: input.public,
      secretHash: secret === null ? null : sha256(secret),
      redirectUris: input.redirectUris,
    },
    select: { id: true },
  });
  await tx.projectMembership.create({ data: { projectId, clientId: app.id, admin: input.admin } });
  return { id: app.id, secret };
}

/** Manages the client applications of the caller's project. */
export class ClientApplications {
  constructor(
    private readonly db: Database,
    private readonly sessions: SessionAdmin,
    private readonly rotationGraceSec: number,
  ) {}

  /** The caller's project's client applications, oldest first. */
  async list(caller: Caller): Promise<ClientAppRow[]> {
    requireAdmin(caller, 'list the client applications');
    const rows = await this.db.prisma.clientApplication.findMany({
      where: { projectId: caller.projectId },
      select: ROW_SELECT,
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: MAX_CLIENTS_PER_PROJECT,
    });
    return rows.map(toRow);
  }

  /** Creates a client application; its secret (confidential) is in this answer only. */
  async create(caller: Caller, input: NewClient): Promise<ClientWithSecret> {
    requireAdmin(caller, 'create a client application');
    const name = clientName(input.name);
    const redirectUris = checkRedirectUris(input.redirectUris ?? []);
    const created = await this.db.prisma.$transaction(async (tx) => {
      // The project row, locked: concurrent creations are counted one at a time.
      await tx.$queryRaw`SELECT id FROM "Project" WHERE id = ${caller.projectId}::uuid FOR UPDATE`;
      const count = await tx.clientApplication.count({ where: { projectId: caller.projectId } });
      if (count >= MAX_CLIENTS_PER_PROJECT)
        throw new ApiError(
          409,
          'conflict',
          `A project has at most ${MAX_CLIENTS_PER_PROJECT} client applications: delete one first`,
        );
      const made = await insertClient(tx, caller.projectId, {
        name,
        redirectUris,
        public: input.public === true,
        admin: input.admin === true,
      });
      await recordAudit(sqlOf(tx), caller.projectId, {
        action: 'client.create',
        actor: actorOf(caller),
        target: { type: 'client', id: made.id },
        detail: {
          name,
          type: input.public === true ? 'public' : 'confidential',
          role: input.admin === true ? 'admin' : 'member',
          redirectUris: redirectUris.length,
        },
      });
      return made;
    });
    return { client: await this.one(caller, created.id), secret: created.secret };
  }

  /** Renames a client and/or replaces its redirect URIs (a sign-in must then name one of the new ones). */
  async update(
    caller: Caller,
    id: unknown,
    changes: { name?: unknown; redirectUris?: readonly unknown[] },
  ): Promise<ClientAppRow> {
    requireAdmin(caller, 'change a client application');
    const cid = clientId(id);
    const data: Prisma.ClientApplicationUpdateManyMutationInput = {};
    if (changes.name !== undefined && changes.name !== null) data.name = clientName(changes.name);
    if (changes.redirectUris !== undefined && changes.redirectUris !== null)
      data.redirectUris = checkRedirectUris(changes.redirectUris);
    if (Object.keys(data).length === 0) return this.one(caller, cid);
    await this.db.prisma.$transaction(async (tx) => {
      const done = await tx.clientApplication.updateMany({
        where: { id: cid, projectId: caller.projectId },
        data,
      });
      if (done.count === 0) throw notFound('Client application not found');
      await recordAudit(sqlOf(tx), caller.projectId, {
        action: 'client.update',
        actor: actorOf(caller),
        target: { type: 'client', id: cid },
        detail: {
          name: data.name === undefined ? null : String(data.name),
          redirectUris: Array.isArray(data.redirectUris) ? data.redirectUris.length : null,
        },
      });
    });
    return this.one(caller, cid);
  }

  /** Gives a confidential client a new secret (in this answer only); the one it replaces is still accepted for the
   * rotation grace, and one replaced earlier no longer is. */
  async rotateSecret(caller: Caller, id: unknown): Promise<ClientWithSecret> {
    requireAdmin(caller, "rotate a client application's secret");
    const cid = clientId(id);
    const secret = randomSecret();
    await this.db.prisma.$transaction(async (tx) => {
      // Locked, so that two rotations at once keep the secret each replaces in turn.
      const rows = await tx.$queryRaw<{ public: boolean; secretHash: string | null }[]>`
        SELECT public, "secretHash" FROM "ClientApplication"
          WHERE id = ${cid}::uuid AND "projectId" = ${caller.projectId}::uuid FOR UPDATE`;
      if (rows.length === 0) throw notFound('Client application not found');
      if (rows[0].public)
        throw new ApiError(409, 'conflict', 'A public client has no secret to rotate', {
          expression: ['id'],
        });
      const graceMs = this.rotationGraceSec * 1000;
      await tx.clientApplication.update({
        where: { id: cid },
        data: {
          secretHash: sha256(secret),
          previousSecretHash: graceMs > 0 ? rows[0].secretHash : null,
          previousSecretExpiresAt: graceMs > 0 ? new Date(Date.now() + graceMs) : null,
        },
      });
      await recordAudit(sqlOf(tx), caller.projectId, {
        action: 'client.rotate',
        actor: actorOf(caller),
        target: { type: 'client', id: cid },
        detail: { graceSeconds: this.rotationGraceSec },
      });
    });
    return { client: await this.one(caller, cid), secret };
  }

  /** Deletes a client application: every session made by or through it ends at once, on every instance. */
  async remove(caller: Caller, id: unknown): Promise<boolean> {
    requireAdmin(caller, 'delete a client application');
    const cid = clientId(id);
    const ended = await this.db.transaction(async (sql) => {
      // Locked first: a token request for this client waits, then finds it gone (its session's foreign key fails).
      const found = await sql<{ name: string }>(
        `SELECT name FROM "ClientApplication" WHERE id = $1::uuid AND "projectId" = $2::uuid FOR UPDATE`,
        [cid, caller.projectId],
      );
      if (found.length === 0) throw notFound('Client application not found');
      const ids = await this.sessions.revokeClient(sql, cid, caller.loginId, 'client application deleted');
      // Its membership and sessions go with it (foreign keys cascade).
      await sql(`DELETE FROM "ClientApplication" WHERE id = $1::uuid`, [cid]);
      await recordAudit(sql, caller.projectId, {
        action: 'client.delete',
        actor: actorOf(caller),
        target: { type: 'client', id: cid },
        detail: { name: found[0].name, sessionsEnded: ids.length },
      });
      return ids;
    });
    await this.sessions.announceRevoked(ended);
    return true;
  }

  private async one(caller: Caller, id: string): Promise<ClientAppRow> {
    const row = await this.db.prisma.clientApplication.findFirst({
      where: { id, projectId: caller.projectId },
      select: ROW_SELECT,
    });
    if (!row) throw notFound('Client application not found');
    return toRow(row);
  }
}
