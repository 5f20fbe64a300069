// One log line per request (pino), with a request id taken from X-Request-Id or generated, echoed back. Written
// by hand rather than with pino-http: building a child logger and serialising the request for every call cost
// as much CPU as Express itself on the hot paths. Only method, path (no query string: it may carry identifiers),
// status and duration are logged; never headers or bodies. Every answer but /healthz's carries its time on the
// server, from the request's first middleware to its headers, as `Server-Timing: app;dur=<ms>` (W3C Server Timing):
// what a client or test measures of the server itself, apart from its own machine's delays.
import crypto from 'node:crypto';
import type { Request, Response } from 'express';
import type { HttpApi } from './api.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express request augmentation is declared this way
  namespace Express {
    interface Request {
      /** The request id (X-Request-Id). */
      id: string;
    }
  }
}

const GIVEN_ID = /^[\w.-]{1,128}$/;

/** Returns the per-request start: attaches the application and the request id, and logs the request when its
 * response is finished. Called by the front middleware (not a middleware itself: one layer less per request). */
export function requestLogger(api: HttpApi): (req: Request, res: Response) => void {
  const logger = api.logger;
  return (req, res) => {
    req.api = api;
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && GIVEN_ID.test(given) ? given : crypto.randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    // Health probes (load balancers, Kubernetes) come every few seconds: not timed, not logged.
    const u = req.url;
    if (u === '/healthz' || u.startsWith('/healthz/') || u.startsWith('/healthz?')) return;
    const start = process.hrtime.bigint();
    // Every way of sending headers (res.json, res.end, an explicit writeHead) goes through writeHead.
    const writeHead = res.writeHead;
    res.writeHead = function (this: Response, ...args: Parameters<Response['writeHead']>) {
      if (!this.headersSent) {
        this.setHeader(
          'Server-Timing',
          `app;dur=${(Number(process.hrtime.bigint() - start) / 1e6).toFixed(2)}`,
        );
      }
      return writeHead.apply(this, args);
    } as Response['writeHead'];
    if (!logger.isLevelEnabled('info')) return;
    res.once('finish', () => {
      const q = req.originalUrl.indexOf('?');
      logger.info({
        reqId: id,
        method: req.method,
        path: q < 0 ? req.originalUrl : req.originalUrl.slice(0, q),
        status: res.statusCode,
        ms: Number(process.hrtime.bigint() - start) / 1e6,
        remoteAddress: req.socket.remoteAddress,
      });
    });
  };
}
