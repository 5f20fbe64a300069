// /graphql: yoga behind a small body limit (read and checked by Express before yoga sees it), document budgets
// (src/graphql/limits.ts), CSRF prevention, a CORS allow-list and security headers that keep GraphiQL working.
import express, {
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import helmet from 'helmet';
import type { Config } from '../config.js';
import { jsonBodyParser } from './json-body.js';
import { bodyParserMessage } from './outcome.js';
import { registerGraphiQLAssets } from './graphiql-page.js';
import { yogaHandler } from './graphql-yoga.js';

const JSON_TYPES = ['application/json', 'application/graphql-response+json', 'application/*+json'];

// GraphiQL (GET /graphql from a browser) is a page whose script, styles and workers come from this server
// (graphiql-page.ts) with no inline script; its styles are partly inline (React and Monaco set style attributes).
// Every other answer is JSON and gets the strictest policy.
const GRAPHIQL_CSP = {
  directives: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'", "'unsafe-inline'"],
    workerSrc: ["'self'", 'blob:'],
    imgSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    fontSrc: ["'self'", 'data:'],
  },
};

/** Sends a body-parser error the way GraphQL clients read errors. */
function graphqlBodyError(err: unknown, _req: Request, res: Response, next: NextFunction): void {
  const e = err as { status?: number; type?: string };
  if (typeof e.status !== 'number' || e.status >= 500) {
    next(err);
    return;
  }
  const message = bodyParserMessage(err, e.status, 'GRAPHQL_BODY_LIMIT');
  res.status(e.status).json({ errors: [{ message, extensions: { code: e.type ?? 'BAD_REQUEST' } }] });
}

/** Mounts /graphql on the app. */
export function mountGraphql(app: Express, config: Config): void {
  // GraphiQL from the installed package (no CDN): its assets first, then the page as yoga's renderer.
  const basePath = new URL(config.baseUrl).pathname;
  registerGraphiQLAssets(app);
  // Loaded at start, not on the first /graphql request: evaluating yoga and its plugins holds the event loop
  // (718 ms measured by the attack suite on a busy machine), which a request must not pay for everyone.
  const graphql = yogaHandler(config, basePath);

  const strictHeaders = helmet();
  const graphiqlHeaders = helmet({ contentSecurityPolicy: GRAPHIQL_CSP });
  const headers: RequestHandler = (req, res, next) =>
    req.method === 'GET' && req.accepts(['json', 'html']) === 'html'
      ? graphiqlHeaders(req, res, next)
      : strictHeaders(req, res, next);
  const json = jsonBodyParser({
    limit: config.graphql.bodyLimit,
    maxDepth: config.jsonMaxDepth,
    type: JSON_TYPES,
  });
  const other = express.raw({ limit: config.graphql.bodyLimit, type: () => true });
  const body: RequestHandler = (req, res, next) => {
    if (req.method !== 'POST') return next();
    if (req.is(JSON_TYPES)) json(req, res, next);
    else other(req, res, next);
  };
  app.use('/graphql', headers, body, graphqlBodyError, graphql);
}
