// The audit log as a project's admins read it (auditEvents: newest first, paged by an opaque cursor, filtered by
// action or actor; the caller's project's rows only, a member gets 403), the log line for what has no project to be
// recorded in (audit.ts says why), and the retention: rows older than AUDIT_RETENTION_DAYS are removed hourly, at
// most 1000 a statement, in the background. docs/sessions-and-security.md, Audit.
import type { Logger } from 'pino';
import type { Caller } from '../core/caller.js';
import { badRequest, forbidden } from '../core/errors.js';
import type { Database } from '../db/database.js';
import { AUDIT_ACTIONS, recordAccountAudit, type AuditEntry, type AuditSql } from './audit.js';
import { sha256 } from './passwords.js';
import { isUuid } from './uuid.js';

/** One recorded action, as the project's admins read it. */
export interface AuditEventRow {
  id: string;
  at: Date;
  action: string;
  outcome: string;
  actorUserId: string | null;
  actorLoginId: string | null;
  actorClientId: string | null;
  targetType: string | null;
  targetId: string | null;
  remoteAddress: string | null;
  userAgent: string | null;
  detail: unknown;
}

/** A page of the log, newest first; `nextCursor` (null on the last page) is `after` for the next one. */
export interface AuditPage {
  events: AuditEventRow[];
  nextCursor: string | null;
}

/** What auditEvents is asked. */
export interface AuditQuery {
  first?: number | null;
  after?: string | null;
  action?: string | null;
  actor?: string | null;
}

/** The most events one page returns. */
export const AUDIT_PAGE_MAX = 100;
const AUDIT_PAGE_DEFAULT = 50;
/** Rows removed by one statement of the retention, and how often it runs. */
const PRUNE_BATCH = 1000;
const PRUNE_INTERVAL_MS = 3600_000;

/** A cursor's time: the row's `at` as PostgreSQL writes it (millisecond timestamp, UTC, no zone). */
const CURSOR_AT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/;
const ACTIONS: ReadonlySet<string> = new Set(AUDIT_ACTIONS);

type Row = Omit<AuditEventRow, 'at'> & { at: string };

/** The cursor after `row`: its time and id, which order the list (ties of time broken by id). */
function cursorOf(row: Row): string {
  return Buffer.from(JSON.stringify([row.at, row.id])).toString('base64url');
}

/** The time and id of a cursor; 400 naming `after` for anything auditEvents did not hand out. */
function parseCursor(after: string): [string, string] {
  const bad = () =>
    badRequest('after is not a cursor of auditEvents (nextCursor of a previous page)', ['after']);
  if (after.length > 200) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(after, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw bad();
  const [at, id] = parsed as unknown[];
  if (typeof at !== 'string' || !CURSOR_AT.test(at) || !isUuid(id)) throw bad();
  // A well-formed but impossible time (month 13) would fail in the database: refuse it here.
  if (Number.isNaN(Date.parse(`${at}Z`))) throw bad();
  return [at, id];
}

/** Reads the log, logs what has no project, and removes old rows. */
export class AuditLog {
  private timer: NodeJS.Timeout | undefined;
  private pruning: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly retentionDays: number,
  ) {}

  /** The caller's project's events, newest first (project admins only). */
  async list(caller: Caller, q: AuditQuery): Promise<AuditPage> {
    if (!caller.admin) throw forbidden('Only a project admin can read the audit log');
    const first = q.first ?? AUDIT_PAGE_DEFAULT;
    if (!Number.isSafeInteger(first) || first < 1 || first > AUDIT_PAGE_MAX)
      throw badRequest(`first must be 1 to ${AUDIT_PAGE_MAX} (the most events one page returns)`, ['first']);
    const after = q.after ? parseCursor(q.after) : null;
    if (q.action && !ACTIONS.has(q.action))
      throw badRequest(`action must be one of: ${AUDIT_ACTIONS.join(', ')}`, ['action']);
    if (q.actor && !isUuid(q.actor)) throw badRequest('actor is not a valid user or client id', ['actor']);
    const rows = await this.db.sql<Row>(
      `SELECT id, to_char(at, 'YYYY-MM-DD"T"HH24:MI:SS.MS') AS at, action, outcome, "actorUserId", "actorLoginId",
              "actorClientId", "targetType", "targetId", "remoteAddress", "userAgent", detail
         FROM "AuditEvent"
        WHERE "projectId" = $1::uuid
          AND ($2::text IS NULL OR action = $2::text)
          AND ($3::uuid IS NULL OR "actorUserId" = $3::uuid OR "actorClientId" = $3::uuid)
          AND ($4::timestamp IS NULL OR (at, id) < ($4::timestamp, $5::uuid))
        ORDER BY at DESC, id DESC
        LIMIT $6`,
      [
        caller.projectId,
        q.action || null,
        q.actor || null,
        after?.[0] ?? null,
        after?.[1] ?? null,
        first + 1,
      ],
    );
    const page = rows.slice(0, first);
    return {
      events: page.map((r) => ({ ...r, at: new Date(`${r.at}Z`) })),
      nextCursor: rows.length > first ? cursorOf(page[page.length - 1]) : null,
    };
  }

  /** Records an account's action in its projects; one in none (a server administrator without a project, say) is
   * logged instead. */
  async account(sql: AuditSql, userId: string, e: AuditEntry): Promise<void> {
    if ((await recordAccountAudit(sql, userId, e)) === 0) this.unrecorded(e, { userId });
  }

  /** An action with no project to record it in (an unknown address or client id): a log line only, so that made-up
   * names cannot fill the table. The address itself is not logged (users type passwords into it by mistake): its
   * hash's first characters, enough to match a known address. */
  unrecorded(e: AuditEntry, about: { email?: string; clientId?: string; userId?: string } = {}): void {
    this.logger.info(
      {
        audit: e.action,
        outcome: e.outcome ?? 'success',
        userId: about.userId,
        clientId: about.clientId?.slice(0, 64),
        emailHash: about.email === undefined ? undefined : sha256(about.email).slice(0, 12),
        remoteAddress: e.actor.remoteAddress,
        detail: e.detail,
      },
      'audit event without a project',
    );
  }

  /** Starts the retention (a first pass now, then hourly); nothing when AUDIT_RETENTION_DAYS is 0. */
  start(): void {
    if (this.retentionDays <= 0) return;
    this.kick();
    this.timer = setInterval(() => this.kick(), PRUNE_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops the retention, waiting for a pass in progress. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.pruning;
  }

  private kick(): void {
    this.pruning ??= this.prune()
      .then(() => undefined)
      .catch((err: unknown) => this.logger.warn({ err }, 'audit retention pass failed'))
      .finally(() => {
        this.pruning = undefined;
      });
  }

  /** Removes the rows older than the retention, a batch a statement (other requests' statements go between). */
  async prune(): Promise<number> {
    let removed = 0;
    for (;;) {
      const gone = await this.db.backgroundSql(
        `DELETE FROM "AuditEvent" WHERE id IN (
           SELECT id FROM "AuditEvent" WHERE at < (now() AT TIME ZONE 'UTC') - make_interval(days => $1::int)
            LIMIT ${PRUNE_BATCH})
         RETURNING 1`,
        [this.retentionDays],
      );
      removed += gone.length;
      if (gone.length < PRUNE_BATCH || !this.timer) break;
    }
    if (removed > 0) this.logger.info({ removed, days: this.retentionDays }, 'old audit events removed');
    return removed;
  }
}
