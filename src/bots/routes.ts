// Bot operations under the FHIR base: $execute (POST/GET, by id or identifier, sync or Prefer: respond-async),
// $deploy, and the job status endpoint. Each handler translates HTTP into an internal GraphQL operation.
import type { IRouter, Request, RequestHandler, Response } from 'express';
import { graphql } from '../generated/gql/index.js';
import { ApiError, badRequest } from '../core/errors.js';
import { HL7_V2, mediaType } from '../core/media-type.js';
import { runOperation } from '../graphql/executor.js';
import type { DeclaredOperation, HttpApi } from '../rest/api.js';
import { encodingError } from '../rest/json-body.js';
import { boundedRawBody } from '../rest/bounded-body.js';
import { contextFor } from '../rest/request.js';
import { asyncHandler, requireAuth } from '../rest/middleware.js';
import { operationOutcome, sendError, sendFhir } from '../rest/outcome.js';
import { fhirBaseUrl } from '../config.js';

const ExecuteDoc = graphql(`
  mutation RestExecuteBot(
    $id: String
    $identifier: String
    $contentType: String
    $body: String
    $query: JSON
  ) {
    executeBot(id: $id, identifier: $identifier, contentType: $contentType, body: $body, query: $query) {
      status
      contentType
      body
      headers
    }
  }
`);
const ExecuteAsyncDoc = graphql(`
  mutation RestExecuteBotAsync(
    $id: String
    $identifier: String
    $contentType: String
    $body: String
    $query: JSON
  ) {
    executeBotAsync(id: $id, identifier: $identifier, contentType: $contentType, body: $body, query: $query) {
      id
    }
  }
`);
const JobDoc = graphql(`
  query RestBotJob($id: String!) {
    botJob(id: $id) {
      id
      status
      responseStatus
      responseType
      responseBody
      responseHeaders
    }
  }
`);
const DeployDoc = graphql(`
  mutation RestDeployBot($id: String!, $code: String!) {
    deployBot(id: $id, code: $code)
  }
`);

/** The bot operations, for the CapabilityStatement. */
export const BOT_OPERATIONS: readonly DeclaredOperation[] = [
  { resourceType: 'Bot', name: 'execute', documentation: 'Runs a bot (docs/bots.md)' },
  { resourceType: 'Bot', name: 'deploy', documentation: 'Replaces and compiles bot code' },
];

function single(v: unknown, name: string): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badRequest(`${name} must be given once`, [name]);
  return v;
}

/** Sends a bot's HTTP-shaped response. */
function sendResult(
  res: Response,
  r: { status: number; contentType: string; body: string; headers: unknown },
): void {
  const headers = (r.headers ?? {}) as Record<string, string>;
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.status(r.status).setHeader('Content-Type', r.contentType);
  res.send(r.body);
}

function wantsAsync(req: Request): boolean {
  return /(^|[,;\s])respond-async($|[,;\s])/i.test(req.get('prefer') ?? '');
}

/** The $execute input from the request: a query object for GET, the raw body and its media type for POST. */
function executeVars(req: Request, id: string | undefined) {
  const q = { ...(req.query as Record<string, unknown>) };
  const identifier = id ? undefined : single(q.identifier, 'identifier');
  if (!id) delete q.identifier;
  if (req.method === 'GET') {
    return { id, identifier, query: q };
  }
  const body = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
  const header = req.get('content-type');
  // No Content-Type and no body: an empty text input (curl -X POST without data); a body without one is a 415.
  const contentType = header ?? (body === '' ? 'text/plain' : '');
  return { id, identifier, contentType, body };
}

/** The place in the bot budget a `$execute` request took before its body was read (released when it ends). */
const admitted = new WeakMap<Request, () => void>();

/** A body-parser error as the client should see it: over the limit names the bot setting, an encoding it cannot
 * undo is a 415 naming the encoding; anything else as it is. */
function bodyError(err: unknown, max: number, setting: string, what: string): unknown {
  const type = (err as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large')
    return new ApiError(413, 'too-costly', `${what} may be at most ${max} bytes (${setting})`);
  return encodingError(err);
}

/** Registers the bot routes under the FHIR base (before the generic FHIR routes). */
export function botRoutes(r: IRouter, base: string, api: HttpApi, jsonParser: RequestHandler): void {
  // The body of each class is counted after its Content-Encoding is undone, and cut at its limit while it streams:
  // bot input BOT_INPUT_LIMIT; HL7 v2 messages their own BOT_HL7_MAX_BYTES (the isolate parses them, not the
  // event loop).
  const limits = {
    input: {
      max: api.config.botInputLimit,
      setting: 'BOT_INPUT_LIMIT',
      what: 'Bot input',
      read: boundedRawBody(api.config.botInputLimit),
    },
    hl7: {
      max: api.config.botHl7MaxBytes,
      setting: 'BOT_HL7_MAX_BYTES',
      what: 'An HL7 v2 message',
      read: boundedRawBody(api.config.botHl7MaxBytes),
    },
  };
  /** The caller's budget admits the execution before its body is read: the project's share of running
   * executions (sync), or of queued jobs (Prefer: respond-async). The place taken, for a sync execution. */
  const admit = async (req: Request): Promise<(() => void) | undefined> => {
    const projectId = req.principal?.projectId;
    if (!projectId) return undefined;
    const services = contextFor(req).services;
    if (wantsAsync(req)) {
      await services.jobs.checkQueue(projectId);
      return undefined;
    }
    return services.bots.admission.admit(projectId);
  };

  // Refused before the body is read: the rest of it is discarded as it arrives (closing the socket mid-upload
  // makes clients drop the answer).
  const refuse = (req: Request, res: Response, err: unknown): void => {
    req.resume();
    sendError(req, res, err);
  };
  const raw: RequestHandler = (req, res, next) => {
    const limit = mediaType(req.get('content-type')) === HL7_V2 ? limits.hl7 : limits.input;
    // A declared length over the limit is answered before reading a byte (the body parser would first read it).
    if (Number(req.get('content-length')) > limit.max) {
      refuse(
        req,
        res,
        new ApiError(413, 'too-costly', `${limit.what} may be at most ${limit.max} bytes (${limit.setting})`),
      );
      return;
    }
    admit(req).then(
      (release) => {
        if (release) {
          admitted.set(req, release);
          res.once('close', release);
        }
        limit.read(req, res, (err?: unknown) => {
          if (err) next(bodyError(err, limit.max, limit.setting, limit.what));
          else next();
        });
      },
      (err: unknown) => refuse(req, res, err),
    );
  };

  const execute = asyncHandler(async (req, res) => {
    const id = req.params.id === undefined ? undefined : String(req.params.id);
    const vars = executeVars(req, id);
    const ctx = contextFor(req);
    const place = admitted.get(req);
    if (place) ctx.services.bots.admission.handOver(ctx.request, place);
    if (wantsAsync(req)) {
      const data = await runOperation(ExecuteAsyncDoc, vars, ctx);
      const jobId = data.executeBotAsync.id;
      res.setHeader('Content-Location', `${fhirBaseUrl(req.api.config)}/job/${jobId}`);
      sendFhir(res, 202, operationOutcome('information', 'informational', `Accepted: job ${jobId}`));
      return;
    }
    const data = await runOperation(ExecuteDoc, vars, ctx);
    sendResult(res, data.executeBot);
  });

  r.post(`${base}/Bot/\\$execute`, requireAuth, raw, execute);
  r.get(`${base}/Bot/\\$execute`, requireAuth, execute);
  r.post(`${base}/Bot/:id/\\$execute`, requireAuth, raw, execute);
  r.get(`${base}/Bot/:id/\\$execute`, requireAuth, execute);

  r.post(
    `${base}/Bot/:id/\\$deploy`,
    requireAuth,
    jsonParser,
    asyncHandler(async (req, res) => {
      const code = deployCode(req.body);
      await runOperation(DeployDoc, { id: String(req.params.id), code }, contextFor(req));
      sendFhir(res, 200, operationOutcome('information', 'informational', 'Bot deployed'));
    }),
  );

  r.get(
    `${base}/job/:id`,
    requireAuth,
    asyncHandler(async (req, res) => {
      const data = await runOperation(JobDoc, { id: String(req.params.id) }, contextFor(req));
      const job = data.botJob;
      if (job.status === 'queued' || job.status === 'running' || job.responseStatus == null) {
        res.setHeader('X-Progress', job.status);
        res.setHeader('Retry-After', '1');
        sendFhir(
          res,
          202,
          operationOutcome('information', 'informational', `Job ${job.id} is ${job.status}`),
        );
        return;
      }
      sendResult(res, {
        status: job.responseStatus,
        contentType: job.responseType ?? 'application/octet-stream',
        body: job.responseBody ?? '',
        headers: job.responseHeaders,
      });
    }),
  );
}

/** The code of a $deploy body: `{code}` (Medplum) or a Parameters resource with a `code` parameter. */
function deployCode(body: unknown): string {
  const b = (body ?? {}) as {
    code?: unknown;
    resourceType?: unknown;
    parameter?: Array<{ name?: unknown; valueString?: unknown }>;
  };
  if (b.resourceType === 'Parameters') {
    const p = Array.isArray(b.parameter) ? b.parameter.find((x) => x?.name === 'code') : undefined;
    if (typeof p?.valueString === 'string') return p.valueString;
    throw badRequest('Parameters must contain a "code" parameter with valueString', ['code']);
  }
  if (typeof b.code === 'string') return b.code;
  throw badRequest('Request body must be {"code": "<JavaScript or TypeScript>"} or Parameters with "code"', [
    'code',
  ]);
}
