// OperationOutcome and OAuth2 error responses, and the mapping from thrown errors to them.
import type { Request, Response } from 'express';
import { ApiError, databaseUnavailable, isDatabaseUnavailable, operationOutcome } from '../core/errors.js';
import { yieldIfHeld } from '../core/turns.js';
import { closeLazy, holdsLazy, LazyJson } from '../fhir/lazy-json.js';

export { operationOutcome };

export const FHIR_JSON = 'application/fhir+json; charset=utf-8';

/** Sends a FHIR JSON body. */
export function sendFhir(res: Response, status: number, body: unknown): void {
  // Written directly rather than through res.send: this is every FHIR response, and send's generic work
  // (type sniffing, freshness checks) showed up in profiles of the $expand hot path. As a Buffer: a string body
  // is concatenated with the header block into a new heap string before it is written, a copy per response.
  sendBytes(res, status, fhirBytes(body));
}

/** A FHIR JSON body as the bytes sendFhir writes (for a caller that keeps them, then sends them with sendBytes). */
export function fhirBytes(body: unknown): Buffer {
  return Buffer.from(JSON.stringify(body));
}

/** Sends FHIR JSON already serialized. */
export function sendBytes(res: Response, status: number, bytes: Buffer): void {
  res.statusCode = status;
  res.setHeader('Content-Type', FHIR_JSON);
  res.setHeader('Content-Length', bytes.length);
  res.end(res.req.method === 'HEAD' ? undefined : bytes);
}

/** Bytes gathered before a write while streaming (and before the status line: an error in the first piece, such
 * as a refused large read, is still an error response). */
const STREAM_PIECE = 64 * 1024;

/**
 * Sends a FHIR JSON body that may hold streamed values (LazyJson: a big CodeSystem's concepts): written in pieces
 * with chunked encoding, at the client's pace, the event loop getting turns in between. Other bodies: sendFhir.
 * An error after the status line was sent ends the connection (the client sees a truncated transfer, never a
 * resource that looks whole).
 */
export async function sendFhirStreamed(res: Response, status: number, body: unknown): Promise<void> {
  if (!holdsLazy(body)) {
    sendFhir(res, status, body);
    return;
  }
  const pieces = jsonPieces(body);
  try {
    let pending = '';
    for await (const piece of pieces) {
      pending += piece;
      if (pending.length < STREAM_PIECE) continue;
      if (!res.headersSent) startStream(res, status);
      if (res.req.method === 'HEAD') break;
      if (res.destroyed) throw new Error('client closed the connection');
      if (!res.write(pending)) await drained(res);
      pending = '';
    }
    if (!res.headersSent) {
      // Small after all: one ordinary response.
      sendBytes(res, status, Buffer.from(pending));
      return;
    }
    res.end(res.req.method === 'HEAD' ? undefined : pending);
  } catch (err) {
    if (!res.headersSent) throw err;
    if (!res.destroyed)
      res.req.api?.logger.warn({ reqId: res.req.id, err }, 'streamed response failed after its start');
    res.destroy();
  } finally {
    await pieces.return(undefined);
    closeLazy(body);
  }
}

function startStream(res: Response, status: number): void {
  res.statusCode = status;
  res.setHeader('Content-Type', FHIR_JSON);
}

/** Resolves when the response can take more; rejects when the client went away. */
function drained(res: Response): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (res.destroyed) {
      reject(new Error('client closed the connection'));
      return;
    }
    const done = (): void => {
      res.off('drain', done);
      res.off('close', gone);
      resolve();
    };
    const gone = (): void => {
      res.off('drain', done);
      res.off('close', gone);
      reject(new Error('client closed the connection'));
    };
    res.on('drain', done);
    res.on('close', gone);
  });
}

/** The JSON text of a value holding LazyJson values, in pieces (JSON.stringify's rules for everything else). */
async function* jsonPieces(value: unknown): AsyncGenerator<string> {
  if (value instanceof LazyJson) {
    yield* value.chunks();
    return;
  }
  if (!holdsLazy(value)) {
    yield JSON.stringify(value) ?? 'null';
    return;
  }
  if (Array.isArray(value)) {
    yield '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) yield ',';
      const v: unknown = value[i];
      yield* jsonPieces(v === undefined || typeof v === 'function' || typeof v === 'symbol' ? null : v);
      const t = yieldIfHeld();
      if (t) await t;
    }
    yield ']';
    return;
  }
  let first = true;
  yield '{';
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    yield (first ? '' : ',') + JSON.stringify(k) + ':';
    first = false;
    yield* jsonPieces(v);
  }
  yield '}';
}

/** Maps any error to a response: OperationOutcome (FHIR and auth paths) or OAuth2 error JSON (/oauth2/*). */
export function sendError(req: Request, res: Response, thrown: unknown): void {
  const oauth = req.path.startsWith('/oauth2/');
  let err = thrown;
  if (!(err instanceof ApiError) && isDatabaseUnavailable(err)) {
    // Not the request's fault nor a bug: 503 with Retry-After, so clients and load balancers retry later.
    req.api?.logger.warn({ reqId: req.id, err: (err as Error).message }, 'database unreachable');
    err = databaseUnavailable();
  }
  if (err instanceof ApiError) {
    // e.g. Retry-After on a 429 (RFC 6585 4).
    if (err.headers) for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
    if (err.status === 401) res.setHeader('WWW-Authenticate', wwwAuthenticate(err.message));
    if (oauth) {
      const code = err.oauthError ?? (err.status === 401 ? 'invalid_token' : 'invalid_request');
      res.status(err.status).json({ error: code, error_description: err.message });
      return;
    }
    sendFhir(res, err.status, err.toOperationOutcome());
    return;
  }
  const status = httpStatusOf(err);
  if (status && status >= 400 && status < 500) {
    // /oauth2 forms have a fixed 64 kB limit (no setting), /auth bodies AUTH_BODY_LIMIT; the others BODY_LIMIT.
    const setting = oauth
      ? '64kb, fixed for /oauth2'
      : req.path.startsWith('/auth/')
        ? 'AUTH_BODY_LIMIT'
        : 'BODY_LIMIT';
    const message = bodyParserMessage(err, status, setting);
    if (oauth) {
      res.status(status).json({ error: 'invalid_request', error_description: message });
      return;
    }
    sendFhir(res, status, operationOutcome('error', status === 413 ? 'too-costly' : 'invalid', message));
    return;
  }
  req.api?.logger.error({ reqId: req.id, err }, 'internal error');
  if (oauth) {
    res.status(500).json({ error: 'server_error', error_description: 'Internal server error' });
    return;
  }
  sendFhir(res, 500, operationOutcome('error', 'exception', 'Internal server error'));
}

function wwwAuthenticate(message: string): string {
  return `Bearer realm="fhir", error="invalid_token", error_description="${message.replace(/"/g, "'")}"`;
}

function httpStatusOf(err: unknown): number | undefined {
  if (err && typeof err === 'object') {
    const e = err as { status?: unknown; statusCode?: unknown };
    if (typeof e.status === 'number') return e.status;
    if (typeof e.statusCode === 'number') return e.statusCode;
  }
  return undefined;
}

/** The client-facing message of a body-parser error (status 4xx); a body over the limit names `setting`. */
export function bodyParserMessage(err: unknown, status: number, setting: string): string {
  const type = (err as { type?: string }).type;
  if (type === 'entity.too.large') {
    const limit = (err as { limit?: number }).limit;
    return `Request body is larger than the limit${limit ? ` of ${limit} bytes` : ''} (${setting})`;
  }
  if (type === 'entity.parse.failed') return `Malformed JSON in request body: ${(err as Error).message}`;
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return (err as Error).message;
  if (status === 415) return 'Unsupported content type';
  return (err as Error).message || 'Bad request';
}
