// The Express application: logging, authentication, the routers, GraphQL (yoga) and error mapping.
import express, { type Express, type IRouter, type RequestHandler } from 'express';
import { requestLogger } from './request-log.js';
import { mountGraphql } from './graphql-endpoint.js';
import { jsonBodyParser } from './json-body.js';
import type { EventLoopWatchdog } from './event-loop.js';
import type { Services } from '../services.js';
import { authenticateThen } from './middleware.js';
import { authRouter } from './auth-routes.js';
import { oauthRouter } from './oauth-routes.js';
import { fhirRoutes } from './fhir-routes.js';
import { operationOutcome, sendError, sendFhir } from './outcome.js';
import { badRequest } from '../core/errors.js';
import { FHIR_PATH } from '../config.js';
import { setSecurityHeaders } from './security-headers.js';

/** The FHIR base path: `{BASE_URL}fhir/R4`. */
export const FHIR_BASE = `/${FHIR_PATH}`;

/** Registers a feature's routes (operations) under the FHIR base, before the generic resource routes. Routes are
 * registered on the app itself with full paths rather than on a mounted router: a mounted router rewrites and
 * re-parses the URL on the way in and out of every request, a measurable share of a fast $expand. */
export type FeatureRoutes = (
  r: IRouter,
  base: string,
  services: Services,
  jsonParser: RequestHandler,
) => void;

/** Builds the Express app for a set of services (on `app` when given: the HTTP server may exist before it). */
export function createExpressApp(
  services: Services,
  features: FeatureRoutes[] = [],
  eventLoop?: EventLoopWatchdog,
  app: Express = express(),
): Express {
  app.disable('x-powered-by');
  app.set('trust proxy', services.config.trustProxy);
  app.set('etag', false);

  const limit = services.config.bodyLimit;
  const jsonParser = jsonBodyParser({
    limit,
    maxDepth: services.config.jsonMaxDepth,
    type: ['application/json', 'application/fhir+json', 'application/*+json'],
  });

  // Auth and OAuth routes are dispatched by prefix, so FHIR requests do not walk their patterns.
  const auth = authRouter(jsonParser);
  const oauth = oauthRouter();
  const authenticated = authenticateThen((req, res, next) => {
    const p = req.path;
    if (p.startsWith('/auth/')) auth(req, res, next);
    else if (p.startsWith('/oauth2/') || p.startsWith('/.well-known/')) oauth(req, res, next);
    else next();
  });
  const startRequest = requestLogger(services);
  const health = { status: 'ok', database: services.db.kind };

  // One middleware in front of the routes (request id and log, /healthz, authentication, auth dispatch): every
  // app-level layer is walked by every request, and Express's router allocates for each one it walks.
  app.use((req, res, next) => {
    startRequest(req, res);
    const p = req.path;
    // /graphql and its GraphiQL assets set their own policy (the page needs a looser one).
    if (!p.startsWith('/graphql')) setSecurityHeaders(res);
    // As the Express route it replaced matched it: /healthz and /healthz/, GET and HEAD, before authentication.
    if ((p === '/healthz' || p === '/healthz/') && (req.method === 'GET' || req.method === 'HEAD')) {
      const fsync = services.db.syncStats;
      res.json({
        ...health,
        ...(eventLoop ? { eventLoop: eventLoop.read() } : {}),
        ...(fsync ? { fsync: { ...fsync, totalMs: Math.round(fsync.totalMs) } } : {}),
      });
      return;
    }
    // PostgreSQL text cannot hold NUL (nor may FHIR strings): refused here rather than failing in the database.
    if (req.url.includes('%00')) {
      sendError(req, res, badRequest('The NUL character (%00) is not allowed in the URL'));
      return;
    }
    authenticated(req, res, next);
  });

  mountGraphql(app, services.config);

  for (const register of features) register(app, FHIR_BASE, services, jsonParser);
  fhirRoutes(app, FHIR_BASE, jsonParser);

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
