// Asynchronous executions (Prefer: respond-async). Jobs live in BotJob, so any instance can run or report them
// and they survive a restart. Each instance runs a claimer woken by NOTIFY bot_job and a periodic poll; claims use
// FOR UPDATE SKIP LOCKED so two instances never run the same job. Fair share: a project runs at most
// PROJECT_CONCURRENCY jobs at once and the next job comes from the project running fewest. An instance renews its
// claims every HEARTBEAT_MS; a claim not renewed for STALE_MS (its instance died) is queued again, and on the
// embedded database (one process) every job running at start is queued again at once. Each claim counts an attempt
// (event.attempt), so a bot can stay idempotent when a job is re-run. A job runs with its caller's session as it is
// when the job starts: a session revoked or expired by then means the job fails (401) without running.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import { ApiError, operationOutcome } from '../core/errors.js';
import { callerOf, principalOf, type Caller, type Principal } from '../core/caller.js';
import type { BotResult, ExecuteRequest, JobRequest } from './types.js';

export const JOB_CHANNEL = 'bot_job';
const POLL_MS = 1000;
const CONCURRENCY = 4;
/** Jobs of one project running at once (all instances): the other slots stay free for other projects. */
const PROJECT_CONCURRENCY = 2;
const HEARTBEAT_MS = 5_000;
/** A claim not renewed for this long belongs to a dead instance (three missed heartbeats). */
const STALE_MS = 3 * HEARTBEAT_MS;
/** After the sandbox refused a job for lack of budget, this instance waits this long before claiming again. */
const BUSY_BACKOFF_MS = 1_000;

/** The stored state of a job, as reported to its caller. */
export interface JobState {
  id: string;
  status: string;
  responseStatus: number | null;
  responseType: string | null;
  responseBody: string | null;
  responseHeaders: Record<string, string> | null;
}

/** What the runner needs from the rest of the server, given at start (the app wires it). */
export interface JobHost {
  /** The session a job's caller signed in with, as it is now (undefined when it no longer exists). */
  session(loginId: string): Promise<(Principal & { revoked: boolean; expiresAt: number }) | undefined>;
  /** Runs a job's execution as its caller (synchronous executions go the same way). */
  execute(caller: Caller, request: ExecuteRequest, traceId: string): Promise<BotResult>;
}

/** Claims and runs queued jobs on this instance; stores jobs for any instance to run. */
export class JobRunner {
  private host: JobHost | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = 0;
  private pumping = false;
  private again = false;
  private closed = false;
  private inFlight = new Set<Promise<void>>();
  private backoffUntil = 0;
  private readonly instanceId = crypto.randomUUID();

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly maxQueuedPerProject = 1000,
  ) {}

  /** Requeues stale claims, subscribes to NOTIFY and starts polling. */
  async start(host: JobHost): Promise<void> {
    this.host = host;
    // The embedded database belongs to this process alone: whatever is still running was orphaned by its last run.
    await this.requeueStale(this.db.kind === 'pglite');
    await this.db.listen(JOB_CHANNEL, () => this.wake());
    let ticks = 0;
    const every = HEARTBEAT_MS / POLL_MS;
    this.timer = setInterval(() => {
      // Renew this instance's claims; instances that died mid-job leave claims behind that nobody renews, and any
      // live instance puts them back in the queue.
      if (++ticks % every === 0)
        void this.heartbeat().then(() => this.requeueStale().then(() => this.wake()));
      else this.wake();
    }, POLL_MS);
    this.timer.unref();
    this.wake();
  }

  /** Renews the claims of this instance's running jobs. */
  private async heartbeat(): Promise<void> {
    await this.db
      .sql(`UPDATE "BotJob" SET "claimedAt" = now() WHERE status = 'running' AND "claimedBy" = $1`, [
        this.instanceId,
      ])
      .catch((err: unknown) => {
        if (!this.closed) this.logger.warn({ err: (err as Error).message }, 'bot job heartbeat failed');
      });
  }

  /** Queues again running jobs whose claim was not renewed for STALE_MS (or, with `all`, every running job). */
  async requeueStale(all = false): Promise<void> {
    await this.db
      .sql(
        `UPDATE "BotJob" SET status = 'queued', "claimedBy" = NULL, "claimedAt" = NULL
          WHERE status = 'running' AND ($1::boolean OR "claimedAt" < now() - make_interval(secs => $2::float8 / 1000))`,
        [all, STALE_MS],
      )
      .catch((err: unknown) => {
        if (!this.closed) this.logger.warn({ err: (err as Error).message }, 'bot job requeue failed');
      });
  }

  /** Throws 429 when `projectId` has its share of jobs queued: checked again before `$execute` reads its body. */
  async checkQueue(projectId: string): Promise<void> {
    // A queue is rows on disk and a claim scan: one project's flood must not grow them without end. The count and
    // the insert are not atomic, so concurrent requests may pass the cap by a few; it bounds, it does not meter.
    const queued = await this.db.prisma.botJob.count({ where: { projectId, status: 'queued' } });
    if (queued >= this.maxQueuedPerProject)
      throw new ApiError(
        429,
        'throttled',
        `This project already has ${queued} asynchronous bot jobs queued (BOT_JOBS_QUEUED_PER_PROJECT=` +
          `${this.maxQueuedPerProject}); retry when some have run`,
        { headers: { 'Retry-After': '5' } },
      );
  }

  /** Stores a job for a request already validated by the caller; returns its id. */
  async enqueue(caller: Caller, botId: string, projectId: string, req: ExecuteRequest): Promise<string> {
    const payload: JobRequest = {
      principal: principalOf(caller),
      request: req,
      traceId: caller.request.requestId || crypto.randomUUID(),
    };
    await this.checkQueue(projectId);
    const job = await this.db.prisma.botJob.create({
      data: { projectId, botId, status: 'queued', request: payload as object, requester: caller.loginId },
    });
    await this.db.notify(JOB_CHANNEL, job.id);
    return job.id;
  }

  /** A job of the caller's project, or null. */
  async get(projectId: string, id: string): Promise<JobState | null> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
    const j = await this.db.prisma.botJob.findFirst({ where: { id, projectId } });
    if (!j) return null;
    return {
      id: j.id,
      status: j.status,
      responseStatus: j.responseStatus,
      responseType: j.responseType,
      responseBody: j.responseBody,
      responseHeaders: (j.responseHeaders as Record<string, string> | null) ?? null,
    };
  }

  private wake(): void {
    if (this.closed || performance.now() < this.backoffUntil) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.pump().finally(() => {
      this.pumping = false;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  private async pump(): Promise<void> {
    while (!this.closed && this.running < CONCURRENCY) {
      let rows: Array<{ id: string; request: unknown; attempts: number }>;
      try {
        // The oldest job of the project running fewest jobs, among projects under their share.
        rows = await this.db.sql<{ id: string; request: unknown; attempts: number }>(
          `UPDATE "BotJob" SET status = 'running', "claimedBy" = $1, "claimedAt" = now(), attempts = attempts + 1
            WHERE id = (
              SELECT q.id FROM "BotJob" q
                LEFT JOIN (SELECT "projectId", count(*) AS n FROM "BotJob" WHERE status = 'running'
                            GROUP BY "projectId") r ON r."projectId" = q."projectId"
               WHERE q.status = 'queued' AND coalesce(r.n, 0) < $2
               ORDER BY coalesce(r.n, 0), q."createdAt"
               LIMIT 1 FOR UPDATE OF q SKIP LOCKED)
              AND status = 'queued'
          RETURNING id, request, attempts`,
          [this.instanceId, PROJECT_CONCURRENCY],
        );
      } catch (err) {
        if (!this.closed) this.logger.warn({ err: (err as Error).message }, 'bot job claim failed');
        return;
      }
      const row = rows[0];
      if (!row) return;
      this.running++;
      const p = this.run(row.id, row.request as JobRequest, row.attempts).finally(() => {
        this.running--;
        this.inFlight.delete(p);
        this.wake();
      });
      this.inFlight.add(p);
    }
  }

  private async run(id: string, job: JobRequest, attempt: number): Promise<void> {
    let status = 500;
    let type = 'application/fhir+json; charset=utf-8';
    let body = '';
    let headers: Record<string, string> = {};
    try {
      if (!this.host) throw new Error('job runner not started');
      // The caller's session now, not as it was at enqueue: revoked or expired means the job does not run.
      const session = await this.host.session(job.principal.loginId);
      if (!session || session.revoked || session.expiresAt <= Date.now())
        throw new ApiError(401, 'login', 'The session that queued this job has ended; the job was not run');
      const caller = callerOf(session, { requestId: job.traceId, headers: {} });
      const r = await this.host.execute(caller, { ...job.request, attempt }, job.traceId);
      if (r.outcome === 'busy') {
        // Refused for lack of budget before it started: queue it again, and give the sandbox a moment.
        this.backoffUntil = performance.now() + BUSY_BACKOFF_MS;
        await this.db.sql(
          `UPDATE "BotJob" SET status = 'queued', "claimedBy" = NULL, "claimedAt" = NULL, attempts = attempts - 1
            WHERE id = $1`,
          [id],
        );
        return;
      }
      ({ status, contentType: type, body, headers } = r);
    } catch (err) {
      const api = err instanceof ApiError ? err : undefined;
      status = api?.status ?? 500;
      const text = api ? api.message : 'Internal server error';
      if (!api) this.logger.error({ err, jobId: id }, 'bot job failed');
      body = JSON.stringify(operationOutcome('error', api?.issueCode ?? 'exception', text));
    }
    try {
      await this.db.prisma.botJob.update({
        where: { id },
        data: {
          status: status < 400 ? 'completed' : 'failed',
          responseStatus: status,
          responseType: type,
          responseBody: body,
          responseHeaders: headers,
          finishedAt: new Date(),
        },
      });
    } catch (err) {
      this.logger.warn({ jobId: id, err: (err as Error).message }, 'bot job result not stored');
    }
  }

  /** Stops claiming; waits for running jobs to finish. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled([...this.inFlight]);
  }
}
