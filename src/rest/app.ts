// The Express application: logging, authentication, GraphQL (yoga), the features' routes and error mapping.
import express, {
  type Express,
  type IRouter,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { requestLogger } from './request-log.js';
import { mountGraphql } from './graphql-endpoint.js';
import { FHIR_JSON_TYPES, jsonBodyParser } from './json-body.js';
import type { EventLoopWatchdog } from './event-loop.js';
import type { HttpApi, Readiness } from './api.js';
import { authenticate } from './middleware.js';
import { operationOutcome, sendError, sendFhir } from './outcome.js';
import { badRequest } from '../core/errors.js';
import { FHIR_PATH } from '../config.js';
import { setSecurityHeaders } from './security-headers.js';
import { applyCors } from './cors.js';

/** The FHIR base path: `{BASE_URL}fhir/R4`. */
export const FHIR_BASE = `/${FHIR_PATH}`;

/** Registers a feature's routes, in the features' order, after /graphql (FHIR operations under `base`, before the
 * generic resource routes, which are a feature's too). Routes are registered on the app itself with full paths
 * rather than on a mounted router: a mounted router rewrites and re-parses the URL on the way in and out of every
 * request, a measurable share of a fast $expand. */
export type FeatureRoutes = (r: IRouter, base: string, api: HttpApi, jsonParser: RequestHandler) => void;

const HEALTH_PATHS = new Map<string, 'facts' | 'live' | 'ready'>([
  ['/healthz', 'facts'],
  ['/healthz/', 'facts'],
  ['/healthz/live', 'live'],
  ['/healthz/ready', 'ready'],
]);

/** Seconds a load balancer is asked to wait before sending traffic to an instance that is not ready. */
const NOT_READY_RETRY_AFTER_S = '5';

/** The health endpoints (docs/operations.md, Health and database outages): liveness (the process answers: always 200), readiness (503
 * while draining or while the database does not answer a cached `SELECT 1`), and /healthz, which stays 200 as
 * before (liveness) with readiness and the facts in its body, and never waits for the database. */
function answerHealth(
  kind: 'facts' | 'live' | 'ready',
  api: HttpApi,
  eventLoop: EventLoopWatchdog | undefined,
  req: Request,
  res: Response,
): void {
  res.setHeader('Cache-Control', 'no-store');
  if (kind === 'live') {
    res.json({ status: 'ok' });
    return;
  }
  if (kind === 'facts') {
    const { ready, reason } = api.readinessNow();
    const { database, ...facts } = api.health();
    res.json({
      status: ready ? 'ok' : 'degraded',
      ready,
      ...(reason ? { reason } : {}),
      database,
      ...(eventLoop ? { eventLoop: eventLoopFacts(eventLoop, req.query.since) } : {}),
      ...facts,
    });
    return;
  }
  const send = ({ ready, reason }: Readiness): void => {
    if (ready) {
      res.json({ status: 'ok' });
      return;
    }
    res.setHeader('Retry-After', NOT_READY_RETRY_AFTER_S);
    res.status(503).json({ status: 'unavailable', reason });
  };
  const r = api.readiness();
  if (r instanceof Promise) void r.then(send);
  else send(r);
}

/** The watchdog's figures, with the worst delay since `?since=<epoch ms>` when asked (the attack suite's measure of
 * one attack, docs/operations.md). */
function eventLoopFacts(eventLoop: EventLoopWatchdog, since: unknown) {
  const at = typeof since === 'string' && /^\d{1,15}$/.test(since) ? Number(since) : undefined;
  return at === undefined ? eventLoop.read() : { ...eventLoop.read(), recent: eventLoop.recent(at) };
}

/** Builds the Express app (on `app` when given: the HTTP server may exist before it). */
export function createExpressApp(
  api: HttpApi,
  features: FeatureRoutes[] = [],
  eventLoop?: EventLoopWatchdog,
  app: Express = express(),
): Express {
  app.disable('x-powered-by');
  app.set('trust proxy', api.config.trustProxy);
  app.set('etag', false);

  const limit = api.config.bodyLimit;
  const jsonParser = jsonBodyParser({
    limit,
    maxDepth: api.config.jsonMaxDepth,
    type: FHIR_JSON_TYPES,
  });

  const startRequest = requestLogger(api);
  const corsOrigins = api.config.corsOrigins;

  // One middleware in front of the routes (request id and log, /healthz, authentication): every app-level layer
  // is walked by every request, and Express's router allocates for each one it walks.
  app.use((req, res, next) => {
    startRequest(req, res);
    const p = req.path;
    // /graphql and its GraphiQL assets set their own policy (the page needs a looser one).
    if (!p.startsWith('/graphql')) setSecurityHeaders(res);
    // /healthz (and /healthz/, as the Express route it replaced matched), /healthz/live and /healthz/ready, GET and
    // HEAD, before authentication.
    if (p.startsWith('/healthz') && (req.method === 'GET' || req.method === 'HEAD')) {
      const kind = HEALTH_PATHS.get(p);
      if (kind) {
        answerHealth(kind, api, eventLoop, req, res);
        return;
      }
    }
    // CORS_ORIGINS: a browser app on an allowed origin calls the REST paths too (its preflight is answered here,
    // before authentication: a preflight carries no credentials).
    if (corsOrigins.length > 0 && applyCors(req, res, corsOrigins)) return;
    // PostgreSQL text cannot hold NUL (nor may FHIR strings): refused here rather than failing in the database.
    if (req.url.includes('%00')) {
      sendError(req, res, badRequest('The NUL character (%00) is not allowed in the URL'));
      return;
    }
    authenticate(req, res, next);
  });

  mountGraphql(app, api.config);

  for (const register of features) register(app, FHIR_BASE, api, jsonParser);

  app.use((req, res) => {
    if (req.path.startsWith('/oauth2/')) {
      res
        .status(404)
        .json({ error: 'invalid_request', error_description: `Not found: ${req.method} ${req.path}` });
      return;
    }
    sendFhir(res, 404, operationOutcome('error', 'not-found', `Not found: ${req.method} ${req.path}`));
  });
  // Express recognises error handlers by their four parameters.
  app.use(((err, req, res, _next) => sendError(req, res, err)) as express.ErrorRequestHandler);
  return app;
}
