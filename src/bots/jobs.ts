// Asynchronous executions (Prefer: respond-async). Jobs live in BotJob, so any instance can run or report them
// and they survive a restart. Each instance runs a claimer woken by NOTIFY bot_job and a periodic poll; claims use
// FOR UPDATE SKIP LOCKED so two instances never run the same job. Jobs whose claim is older than the bot's timeout
// plus a margin (their instance died) are queued again.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import { ApiError } from '../graphql/errors.js';
import { createContext, type GraphQLContext } from '../graphql/context.js';
import type { Services } from '../services.js';
import type { BotService } from './service.js';
import type { ExecuteRequest, JobRequest } from './types.js';

export const JOB_CHANNEL = 'bot_job';
const POLL_MS = 1000;
const STALE_MARGIN_MS = 30_000;
const CONCURRENCY = 4;
const REQUEUE_EVERY = 10;

/** The stored state of a job, as reported to its caller. */
export interface JobState {
  id: string;
  status: string;
  responseStatus: number | null;
  responseType: string | null;
  responseBody: string | null;
  responseHeaders: Record<string, string> | null;
}

/** Claims and runs queued jobs on this instance. */
export class JobRunner {
  private services: Services | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = 0;
  private pumping = false;
  private again = false;
  private closed = false;
  private inFlight = new Set<Promise<void>>();
  private readonly instanceId = crypto.randomUUID();

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly bots: BotService,
  ) {}

  /** Requeues stale claims, subscribes to NOTIFY and starts polling. */
  async start(services: Services): Promise<void> {
    this.services = services;
    await this.requeueStale();
    await this.db.listen(JOB_CHANNEL, () => this.wake());
    let ticks = 0;
    this.timer = setInterval(() => {
      // Instances that died mid-job leave claims behind; any live instance puts them back in the queue.
      if (++ticks % REQUEUE_EVERY === 0) void this.requeueStale().then(() => this.wake());
      else this.wake();
    }, POLL_MS);
    this.timer.unref();
    this.wake();
  }

  /** Queues again jobs claimed longer ago than their bot's timeout plus a margin. */
  async requeueStale(): Promise<void> {
    await this.db
      .sql(
        `UPDATE "BotJob" j SET status = 'queued', "claimedBy" = NULL, "claimedAt" = NULL
         FROM "Bot" b
        WHERE b.id = j."botId" AND j.status = 'running'
          AND j."claimedAt" < now() - make_interval(secs => (b."timeoutMs" + $1) / 1000.0)`,
        [STALE_MARGIN_MS],
      )
      .catch((err: unknown) => {
        if (!this.closed) this.logger.warn({ err: (err as Error).message }, 'bot job requeue failed');
      });
  }

  /** Stores a job for a request already validated by the caller; returns its id. */
  async enqueue(ctx: GraphQLContext, botId: string, projectId: string, req: ExecuteRequest): Promise<string> {
    const principal = ctx.principal;
    if (!principal) throw new ApiError(401, 'login', 'Authentication required');
    const payload: JobRequest = {
      principal,
      request: req,
      traceId: ctx.request.requestId || crypto.randomUUID(),
    };
    const job = await this.db.prisma.botJob.create({
      data: { projectId, botId, status: 'queued', request: payload as object, requester: principal.loginId },
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
    if (this.closed) return;
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
      let rows: Array<{ id: string; request: unknown }>;
      try {
        rows = await this.db.sql<{ id: string; request: unknown }>(
          `UPDATE "BotJob" SET status = 'running', "claimedBy" = $1, "claimedAt" = now()
            WHERE id = (SELECT id FROM "BotJob" WHERE status = 'queued' ORDER BY "createdAt"
                         LIMIT 1 FOR UPDATE SKIP LOCKED)
              AND status = 'queued'
          RETURNING id, request`,
          [this.instanceId],
        );
      } catch (err) {
        if (!this.closed) this.logger.warn({ err: (err as Error).message }, 'bot job claim failed');
        return;
      }
      const row = rows[0];
      if (!row) return;
      this.running++;
      const p = this.run(row.id, row.request as JobRequest).finally(() => {
        this.running--;
        this.inFlight.delete(p);
        this.wake();
      });
      this.inFlight.add(p);
    }
  }

  private async run(id: string, job: JobRequest): Promise<void> {
    let status = 500;
    let type = 'application/fhir+json; charset=utf-8';
    let body = '';
    let headers: Record<string, string> = {};
    try {
      if (!this.services) throw new Error('job runner not started');
      const ctx = createContext(this.services, job.principal, { requestId: job.traceId, headers: {} });
      const r = await this.bots.execute(ctx, job.request, job.traceId);
      ({ status, contentType: type, body, headers } = r);
    } catch (err) {
      const api = err instanceof ApiError ? err : undefined;
      status = api?.status ?? 500;
      const text = api ? api.message : 'Internal server error';
      if (!api) this.logger.error({ err, jobId: id }, 'bot job failed');
      body = JSON.stringify({
        resourceType: 'OperationOutcome',
        issue: [{ severity: 'error', code: api?.issueCode ?? 'exception', details: { text } }],
      });
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
