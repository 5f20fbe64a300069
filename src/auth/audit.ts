// The audit log's writer (issue 24, item 6): one AuditEvent row per sign-in, failed sign-in, password or
// second-factor change and admin action, written with the action's own statement or transaction (`sql` is the
// transaction's), so a rolled-back action leaves no row and no action commits without its row. Project events go
// to the project they happen in; account events (a password, a factor, a failed sign-in of a known account) go to
// every project of the account, whose admins all depend on it. What has no project (a failed sign-in of an unknown
// address, a client id that names nothing) is logged only: an attacker cannot fill the table with made-up names.
// Reading and retention: audit-log.ts. docs/sessions-and-security.md, Audit.
import type { Caller } from '../core/caller.js';
import type { Database } from '../db/database.js';
import type { Prisma } from '../generated/prisma/client.js';

/** Every action the log records (the `action` column, and the filter of auditEvents). */
export const AUDIT_ACTIONS = [
  'signin',
  'signin.failed',
  'signin.mfa',
  'signin.mfa.failed',
  'signout',
  'session.revoke',
  'password.change',
  'password.reset.request',
  'password.reset',
  'mfa.enroll',
  'mfa.disable',
  'mfa.recovery.used',
  'project.create',
  'project.mfa.required',
  'member.create',
  'member.invite',
  'member.role',
  'member.remove',
  'invitation.accept',
  'invitation.decline',
  'invitation.cancel',
  'client.create',
  'client.update',
  'client.rotate',
  'client.delete',
] as const;

/** One of AUDIT_ACTIONS. */
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who acted, and from where. All optional: a failed sign-in has no session, a CLI no address. */
export interface AuditActor {
  userId?: string | null;
  loginId?: string | null;
  clientId?: string | null;
  remoteAddress?: string;
  userAgent?: string;
}

/** A few plain values describing an action. Never a secret, token, password, code or link: nothing here may hold
 * one (the types allow no objects, so a request body cannot be passed whole). */
export type AuditDetail = Record<string, string | number | boolean | null>;

/** One audited action. */
export interface AuditEntry {
  action: AuditAction;
  actor: AuditActor;
  outcome?: 'success' | 'failure';
  target?: { type: 'user' | 'membership' | 'invitation' | 'client' | 'session' | 'project'; id: string };
  detail?: AuditDetail;
}

/** Runs one statement with its parameters: `Database['sql']` (a transaction's or not), or sqlOf(a Prisma client). */
export type AuditSql = (text: string, params: unknown[]) => Promise<unknown[]>;

/** Longest user agent kept (as a session keeps it). */
export const MAX_AUDIT_USER_AGENT = 512;
const MAX_ADDRESS = 64;
const MAX_DETAIL_KEYS = 10;
const MAX_DETAIL_STRING = 200;
/** Most projects one account event is written to (an account in more has the rest go unrecorded, and logged). */
export const MAX_ACCOUNT_PROJECTS = 50;

/** `sql` for a Prisma transaction (or client): audit rows written inside a `$transaction` callback. */
export function sqlOf(tx: Prisma.TransactionClient | Database['prisma']): AuditSql {
  return (text, params) => tx.$queryRawUnsafe<unknown[]>(text, ...params);
}

/** The actor of a signed-in caller: its user (or client), session, and request's address and user agent. */
export function actorOf(caller: Caller): AuditActor {
  return {
    userId: caller.userId,
    loginId: caller.loginId,
    clientId: caller.clientId,
    remoteAddress: caller.request.remoteAddress,
    userAgent: caller.request.userAgent,
  };
}

/** A string jsonb accepts: a lone surrogate (JSON.stringify writes it as `\ud800`) and NUL (`\u0000`) are
 * refused by PostgreSQL, so a name a client sent with one would fail its action; they become U+FFFD, as a text
 * column stores a lone surrogate. */
function storable(v: string): string {
  return v.slice(0, MAX_DETAIL_STRING).replace(UNSTORABLE, '\ufffd');
}

/** NUL, and a surrogate without its pair (matched by code unit: no `u` flag). */
// eslint-disable-next-line no-control-regex -- NUL is one of them
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The detail, bounded: at most 10 keys, strings cut at 200 characters. */
function boundedDetail(detail: AuditDetail | undefined): string | null {
  if (!detail) return null;
  const out: AuditDetail = {};
  for (const [k, v] of Object.entries(detail).slice(0, MAX_DETAIL_KEYS))
    out[storable(k.slice(0, 50))] = typeof v === 'string' ? storable(v) : v;
  return JSON.stringify(out);
}

/** The row's values after the project ($1): $2.. in INSERT_COLUMNS order. */
function params(e: AuditEntry): unknown[] {
  return [
    e.action,
    e.outcome ?? 'success',
    e.actor.userId ?? null,
    e.actor.loginId ?? null,
    e.actor.clientId ?? null,
    e.target?.type ?? null,
    e.target?.id ?? null,
    e.actor.remoteAddress?.slice(0, MAX_ADDRESS) ?? null,
    e.actor.userAgent?.slice(0, MAX_AUDIT_USER_AGENT) ?? null,
    boundedDetail(e.detail),
  ];
}

const INSERT = `INSERT INTO "AuditEvent" (id, "projectId", at, action, outcome, "actorUserId", "actorLoginId",
    "actorClientId", "targetType", "targetId", "remoteAddress", "userAgent", detail)`;

/** The selected values, with the project as `project` (the statement's clock: the time the action was done). */
const values = (project: string) =>
  `SELECT gen_random_uuid(), ${project}, clock_timestamp() AT TIME ZONE 'UTC', $2, $3, $4::uuid, $5::uuid,
    $6::uuid, $7, $8, $9, $10, $11::jsonb`;

/** Records an action of a project with `sql` (the action's transaction, where it has one). */
export async function recordAudit(sql: AuditSql, projectId: string, e: AuditEntry): Promise<void> {
  await sql(`${INSERT} ${values('$1::uuid')}`, [projectId, ...params(e)]);
}

/** Records an action of an account in each project it belongs to (at most MAX_ACCOUNT_PROJECTS); returns how many
 * rows were written (0: the account is in no project, and only the log says it happened). */
export async function recordAccountAudit(sql: AuditSql, userId: string, e: AuditEntry): Promise<number> {
  const rows = await sql(
    `${INSERT} ${values('m."projectId"')}
       FROM (SELECT DISTINCT "projectId" FROM "ProjectMembership" WHERE "userId" = $1::uuid
              ORDER BY "projectId" LIMIT ${MAX_ACCOUNT_PROJECTS}) m
     RETURNING "projectId"`,
    [userId, ...params(e)],
  );
  return rows.length;
}
