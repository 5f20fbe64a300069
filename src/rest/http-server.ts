// The HTTP server for the Express app, with requests and responses born with Express's prototypes.
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

/** Constructors as node:http calls them (`new IncomingMessage(socket)`, `new ServerResponse(req, options)`). */
type MessageConstructor<T> = new (...args: never[]) => T;

/**
 * Creates an http.Server for `app` whose request and response objects already have `app.request` and
 * `app.response` as their prototypes.
 *
 * Express's `app.handle` calls `Object.setPrototypeOf(req, app.request)` (and the same for `res`) on every
 * request. On V8 that re-shapes two fresh objects per request and makes the young generation keep them: measured
 * on a bare Express route, ~3.4 MB survives every scavenge (pauses of 4-7 ms) and throughput halves. When the
 * prototype is already the one Express sets, setPrototypeOf changes nothing (the spec returns early), and nothing
 * survives. Node's `IncomingMessage`/`ServerResponse` options exist for exactly this kind of subclassing.
 */
export function createHttpServer(
  app: Express,
  timeouts: { requestTimeoutMs: number; headersTimeoutMs: number } = {
    requestTimeoutMs: 300_000,
    headersTimeoutMs: 60_000,
  },
): http.Server {
  // Plain constructor functions (not classes): their `prototype` must be Express's own objects, which a class's
  // read-only `prototype` cannot be; node:http's two constructors are plain functions meant to be called this way.
  function ExpressRequest(this: http.IncomingMessage, socket: Socket): void {
    http.IncomingMessage.call(this, socket);
  }
  ExpressRequest.prototype = app.request;
  function ExpressResponse(this: http.ServerResponse, req: http.IncomingMessage, options?: unknown): void {
    // The options argument is node:http's own (highWaterMark and the like), missing from its typings.
    const construct = http.ServerResponse as unknown as (
      this: http.ServerResponse,
      ...args: unknown[]
    ) => void;
    construct.call(this, req, options);
  }
  ExpressResponse.prototype = app.response;
  return http.createServer(
    {
      IncomingMessage: ExpressRequest as unknown as MessageConstructor<http.IncomingMessage>,
      ServerResponse: ExpressResponse as unknown as MessageConstructor<http.ServerResponse>,
      // A client trickling its headers or body is answered 408 and disconnected once these run out; node checks
      // them every connectionsCheckingInterval (30 s by default, far longer than the timeouts themselves).
      requestTimeout: timeouts.requestTimeoutMs,
      headersTimeout: Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs || Infinity),
      connectionsCheckingInterval: 1_000,
    } as http.ServerOptions,
    app,
  );
}
