// The bot service of one server instance: lookup (cached), input parsing, the sandbox call, the HTTP shape of the
// result, execution records and project secrets. (Asynchronous executions: jobs.ts.)
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { LargeRequests } from '../fhir/large-requests.js';
import { ApiError, badRequest, notFound, operationOutcome } from '../core/errors.js';
import type { Caller, Principal } from '../core/caller.js';
import { parseIdentifierToken } from '../fhir/types.js';
import { HL7_V2 } from '../core/media-type.js';
import { InputAdmission } from './admission.js';
import { BotCache, SECRETS_CHANGED } from './cache.js';
import { ExecutionRecorder, truncateLog } from './executions.js';
import { createSandbox } from './engine.js';
import { parseInput } from './input.js';
import { BotStore } from './store.js';
import { JsonText, type BotSandbox, type ExecutionResult } from './sandbox/index.js';
import type { BotResult, DeployedBot, ExecuteRequest, ExecutionHost } from './types.js';

const FHIR_JSON = 'application/fhir+json; charset=utf-8';

/** Content types whose input is checked JSON (handed to the bot as its text). */
const JSON_TYPES = new Set(['application/json', 'application/fhir+json']);

/** Bot-caused failures, by sandbox error kind: distinct statuses (see docs/bots.md). */
const ERROR_STATUS: Record<string, { status: number; code: string }> = {
  error: { status: 400, code: 'processing' },
  timeout: { status: 504, code: 'timeout' },
  memory: { status: 507, code: 'too-costly' },
  'output-too-large': { status: 502, code: 'too-costly' },
  busy: { status: 429, code: 'throttled' },
};

/** Seconds a refused execution is told to wait (Retry-After): executions are short, a share frees up quickly. */
const BUSY_RETRY_AFTER_SEC = 1;

function outcomeBody(severity: 'error' | 'information', code: string, text: string): string {
  return JSON.stringify(operationOutcome(severity, code, text));
}

function isResource(v: unknown): boolean {
  return (
    !!v &&
    typeof v === 'object' &&
    !Array.isArray(v) &&
    typeof (v as { resourceType?: unknown }).resourceType === 'string'
  );
}

/** The HTTP response for a sandbox result. */
export function toBotResult(r: ExecutionResult): BotResult {
  if (!r.ok) {
    const e = ERROR_STATUS[r.error] ?? ERROR_STATUS.error;
    const busy = r.error === 'busy';
    return {
      // The project's share spent: 429 (only this project waits); the server's: 503.
      status: busy && r.scope === 'server' ? 503 : e.status,
      contentType: FHIR_JSON,
      body: outcomeBody('error', e.code, r.message),
      headers: busy ? { 'retry-after': String(BUSY_RETRY_AFTER_SEC) } : {},
      outcome: r.error,
    };
  }
  const v = r.value;
  const ok = (contentType: string, body: string, status = 200, headers: Record<string, string> = {}) => ({
    status,
    contentType,
    body,
    headers,
    outcome: 'success',
  });
  switch (v.kind) {
    case 'undefined':
      return ok(FHIR_JSON, outcomeBody('information', 'informational', 'Bot executed successfully'));
    case 'string':
      return ok('text/plain; charset=utf-8', v.text);
    case 'hl7':
      return ok(HL7_V2, v.text);
    case 'json':
      return ok(
        isResource(v.json) ? FHIR_JSON : 'application/json; charset=utf-8',
        JSON.stringify(v.json ?? null),
      );
    case 'response': {
      const headers = { ...v.headers };
      delete headers['content-type'];
      const b = v.body;
      if (b.type === 'empty') return ok(v.contentType ?? 'text/plain; charset=utf-8', '', v.status, headers);
      if (b.type === 'text')
        return ok(v.contentType ?? 'text/plain; charset=utf-8', b.text, v.status, headers);
      const type = v.contentType ?? (isResource(b.json) ? FHIR_JSON : 'application/json; charset=utf-8');
      return ok(type, JSON.stringify(b.json ?? null), v.status, headers);
    }
  }
}

/** The `requester` reference of a principal. */
function requesterOf(p: Principal): string {
  if (p.userId) return `User/${p.userId}`;
  if (p.clientId) return `ClientApplication/${p.clientId}`;
  return `ProjectMembership/${p.membershipId}`;
}

/** Bots for one server instance. */
export class BotService {
  readonly cache: BotCache;
  readonly store: BotStore;
  readonly recorder: ExecutionRecorder;
  /** Admits `$execute` requests before their body is read (routes.ts). */
  readonly admission: InputAdmission;
  private sandbox: BotSandbox | undefined;

  constructor(
    private readonly db: Database,
    private readonly config: Config,
    private readonly logger: Logger,
    /** The server's large-request budget: a bot's large host calls hold its places too. */
    private readonly large?: LargeRequests,
  ) {
    this.cache = new BotCache(db);
    this.store = new BotStore(db, this.cache);
    this.recorder = new ExecutionRecorder(db, logger);
    this.admission = new InputAdmission(
      { project: config.botProjectMaxConcurrent, server: config.botMaxConcurrent },
      (projectId) => this.sandbox?.running(projectId) ?? 0,
    );
  }

  /** Subscribes to invalidations and builds the sandbox. */
  async start(): Promise<void> {
    await this.cache.start();
    this.sandbox = await createSandbox(this.config, this.large);
  }

  /** Writes the buffered execution records and disposes of the sandbox. */
  async close(): Promise<void> {
    await this.recorder.close();
    this.sandbox?.dispose();
  }

  /** The bot a request names, in the caller's project (404 otherwise). */
  async resolve(caller: Caller, req: Pick<ExecuteRequest, 'id' | 'identifier'>): Promise<DeployedBot> {
    let id = req.id ?? undefined;
    if (!id && req.identifier) {
      const { system, value } = parseIdentifierToken(req.identifier);
      if (!value) throw badRequest('identifier must be system|value', ['identifier']);
      const found = await this.cache.botIdByIdentifier(caller.projectId, system ?? '', value);
      if (!found) throw notFound(`No Bot with identifier ${req.identifier} in this project`);
      id = found;
    }
    if (!id)
      throw badRequest('Name the bot: give its id or an identifier (system|value)', ['id', 'identifier']);
    const bot = /^[0-9a-f-]{36}$/i.test(id) ? await this.cache.bot(id) : null;
    // Another project's bot is "not found": its existence is not revealed.
    if (!bot || bot.projectId !== caller.projectId) throw notFound(`Bot/${id} not found`);
    return bot;
  }

  /** Parses a request's input (throws 400/413/415) for a bot (checked first so 404 wins over a bad body). The size
   * limits hold for every way in: `$execute` (whose body parser cut it already), GraphQL, a bot's executeBot. */
  async eventInput(req: ExecuteRequest): Promise<unknown> {
    if (req.query) return req.query;
    const body = req.body ?? '';
    const hl7 = req.contentType === HL7_V2;
    const [max, setting] = hl7
      ? [this.config.botHl7MaxBytes, 'BOT_HL7_MAX_BYTES']
      : [this.config.botInputLimit, 'BOT_INPUT_LIMIT'];
    // A string's UTF-8 length is at least its length and at most three times it: measured only when it matters.
    if (body.length > max || (body.length * 3 > max && Buffer.byteLength(body) > max))
      throw new ApiError(
        413,
        'too-costly',
        hl7
          ? `An HL7 v2 message may be at most ${max} bytes (${setting})`
          : `Bot input may be at most ${max} bytes (${setting})`,
      );
    const input = await parseInput(req.contentType, body, this.config.jsonMaxDepth);
    if (hl7) return { hl7: input };
    // Checked JSON goes to the bot as its text: serialising the parsed value again held the event loop in one
    // stretch (27-160 ms for 1 MiB on a loaded machine).
    return typeof input === 'object' && input !== null && JSON_TYPES.has(req.contentType)
      ? new JsonText(body)
      : input;
  }

  /** Runs a bot for the caller (its `medplum` calls through `host`) and records the execution. */
  async execute(
    caller: Caller,
    req: ExecuteRequest,
    host: ExecutionHost,
    traceId?: string,
  ): Promise<BotResult> {
    const bot = await this.resolve(caller, req);
    const input = await this.eventInput(req);
    if (!bot.compiledCode) throw badRequest(`Bot/${bot.id} has no code: deploy it with $deploy first`);
    if (!this.sandbox) throw new ApiError(503, 'exception', 'The bot sandbox is not running');
    // Breadth as well as depth: one request (with every bot it calls) runs a bounded number of executions.
    const max = this.config.botMaxExecutionsPerRequest;
    if (host.countExecution() > max)
      throw new ApiError(
        429,
        'too-costly',
        `One request may run at most ${max} bot executions, bots calling bots included ` +
          '(BOT_MAX_EXECUTIONS_PER_REQUEST)',
      );
    const secrets = await this.cache.projectSecrets(bot.projectId);
    const requester = requesterOf(caller);
    const startedAt = new Date();
    // The request's place in the budget, taken before its body was read, passes to the execution: the sandbox
    // admits it synchronously, before anything else can run.
    this.admission.takeOver(caller.request);
    const result = await this.sandbox.execute({
      projectId: bot.projectId,
      botId: bot.id,
      codeVersion: String(bot.versionId),
      compiledCode: bot.compiledCode,
      timeoutMs: bot.timeoutMs,
      memoryMb: bot.memoryMb,
      event: {
        bot: { reference: `Bot/${bot.id}`, ...(bot.name ? { display: bot.name } : {}) },
        contentType: req.contentType,
        input,
        secrets,
        traceId: traceId ?? (caller.request.requestId || crypto.randomUUID()),
        requester: { reference: requester },
        headers: req.headers ?? {},
        ...(req.attempt !== undefined ? { attempt: req.attempt } : {}),
      },
      medplum: host.medplum,
    });
    const out = toBotResult(result);
    this.recorder.record({
      botId: bot.id,
      projectId: bot.projectId,
      requester,
      startedAt,
      durationMs: Math.round(result.durationMs),
      outcome: out.outcome,
      status: out.status,
      message: result.ok ? null : result.message.slice(0, 4000),
      log: result.logs ? truncateLog(result.logs, this.config.botLogLimit) : null,
      contentType: req.contentType,
      hostCalls: result.host?.calls ?? 0,
      hostBytes: Math.min(result.host?.bytes ?? 0, 2 ** 31 - 1),
      hostRefused: result.host?.refused?.slice(0, 1000) ?? null,
    });
    return out;
  }

  /** Sets (creates or replaces) a project secret. */
  async setSecret(projectId: string, name: string, value: string): Promise<void> {
    if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/.test(name))
      throw badRequest('Secret name must be 1-128 letters, digits, _ . - (starting with a letter or _)', [
        'name',
      ]);
    await this.db.prisma.projectSecret.upsert({
      where: { projectId_name: { projectId, name } },
      create: { projectId, name, value },
      update: { value },
    });
    this.cache.dropSecrets(projectId);
    await this.db.notify(SECRETS_CHANGED, projectId);
  }

  /** Deletes a project secret; false when there was none. */
  async deleteSecret(projectId: string, name: string): Promise<boolean> {
    const r = await this.db.prisma.projectSecret.deleteMany({ where: { projectId, name } });
    this.cache.dropSecrets(projectId);
    await this.db.notify(SECRETS_CHANGED, projectId);
    return r.count > 0;
  }
}
