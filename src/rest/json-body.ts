// JSON body parsing with two checks on the raw bytes before JSON.parse: nesting depth (a body nested 10,000 deep
// reached recursive code and answered 500) and the NUL character `\u0000` (PostgreSQL text cannot hold it, so a
// NUL reached the database and answered 500; FHIR strings do not allow it either). Both are 400s naming the rule.
// A body over LARGE_BODY_BYTES, or compressed, is a large request (docs/operations.md, Large requests): it takes a
// slot of the large request budget before it is read (429 when none is free), and is parsed in steps (core/json-in-steps.ts) instead
// of in one JSON.parse that held the event loop (0.4 s for 45 MB).
import express, { type Request, type RequestHandler } from 'express';
import { ApiError } from '../core/errors.js';
import { LARGE_BODY_BYTES } from '../fhir/large-requests.js';
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  JsonStepsSyntaxError,
  NUL_ESCAPE,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  parseJsonInSteps,
} from '../core/json-in-steps.js';

/** An error body-parser passes on with its status; sendError turns it into an OperationOutcome / OAuth2 error. */
class BodyError extends Error {
  readonly status = 400;
  readonly expose = true;
  constructor(
    message: string,
    readonly type: string,
  ) {
    super(message);
  }
}

const tooDeep = (maxDepth: number) =>
  new BodyError(`JSON body nested deeper than the limit of ${maxDepth} (JSON_MAX_DEPTH)`, 'entity.too.deep');
const nul = () =>
  new BodyError('The NUL character (\\u0000) is not allowed in a JSON string', 'entity.nul.character');

/** Throws a 400 error when `buf` (JSON text) nests deeper than `maxDepth` or a string holds `\u0000`. One linear
 * pass over the bytes, strings skipped; malformed JSON is left for JSON.parse to report. */
export function checkJsonBytes(buf: Buffer, maxDepth: number): void {
  const mayBeDeep = buf.length > maxDepth;
  const mayHaveNul = buf.indexOf(NUL_ESCAPE) !== -1;
  if (!mayBeDeep && !mayHaveNul) return;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === BACKSLASH) {
        if (mayHaveNul && buf[i + 1] === 0x75 && buf.compare(NUL_ESCAPE, 0, 5, i + 1, i + 6) === 0) {
          throw nul();
        }
        i++;
      } else if (c === QUOTE) {
        inString = false;
      }
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) throw tooDeep(maxDepth);
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
}

/** The Content-Encodings body-parser undoes (counting the inflated bytes against the limit as it streams). */
const ENCODINGS = 'gzip, deflate, br or identity';

/** body-parser's refusal of a Content-Encoding it cannot undo, as a 415 naming it and those it can; other errors as
 * they are. */
export function encodingError(err: unknown): unknown {
  if ((err as { type?: unknown } | null)?.type !== 'encoding.unsupported') return err;
  const encoding = String((err as { encoding?: unknown }).encoding);
  return new ApiError(415, 'not-supported', `Unsupported Content-Encoding "${encoding}"; use ${ENCODINGS}`);
}

/** body-parser's error for malformed JSON (a 400 "Malformed JSON in request body: ..."). */
function parseFailed(err: unknown): Error {
  return new BodyError((err as Error).message, 'entity.parse.failed');
}

/** The content types the FHIR and /auth routes read as JSON. */
export const FHIR_JSON_TYPES = ['application/json', 'application/fhir+json', 'application/*+json'];

/** A JSON body parser (UTF-8, as FHIR requires) with the depth and NUL checks, for the given content types. */
export function jsonBodyParser(opts: {
  limit: string | number;
  maxDepth: number;
  type: string[];
}): RequestHandler {
  const raw = express.raw({ limit: opts.limit, type: opts.type });
  return (req, res, next) => {
    // A declared large body waits for nothing: refused before it is read when the budget is spent. So is a
    // compressed one: what it inflates to is known only once it is read (a 60 KB gzip body inflates to 60 MB).
    let release =
      Number(req.headers['content-length']) > LARGE_BODY_BYTES || compressed(req)
        ? takeLargeSlot(req, next)
        : undefined;
    if (release === null) return;
    raw(req, res, (err?: unknown) => {
      if (err) {
        release?.();
        next(encodingError(err));
        return;
      }
      const buf = req.body as unknown;
      if (!Buffer.isBuffer(buf)) {
        release?.();
        req.body = undefined;
        next();
        return;
      }
      const charset = charsetOf(req);
      if (charset !== 'utf-8') {
        release?.();
        next(
          Object.assign(
            new BodyError(
              `unsupported charset "${charset.toUpperCase()}": FHIR JSON is UTF-8`,
              'charset.unsupported',
            ),
            { status: 415 },
          ),
        );
        return;
      }
      if (buf.length === 0) {
        release?.();
        req.body = {};
        next();
        return;
      }
      if (buf.length <= LARGE_BODY_BYTES) {
        try {
          checkJsonBytes(buf, opts.maxDepth);
          req.body = JSON.parse(buf.toString('utf8'));
          // The bytes stay with the request: a route may key a cached answer by them.
          req.rawBody = buf;
        } catch (e) {
          next(e instanceof BodyError ? e : parseFailed(e));
          return;
        } finally {
          release?.();
        }
        next();
        return;
      }
      // Sent without a length (chunked): counted now.
      release ??= takeLargeSlot(req, next);
      if (release === null) return;
      const done = release;
      res.once('close', done);
      parseJsonInSteps(buf, opts.maxDepth, { tooDeep: () => tooDeep(opts.maxDepth), nul }).then(
        (value) => {
          req.body = value;
          next();
        },
        (e: unknown) => next(e instanceof JsonStepsSyntaxError ? parseFailed(e) : e),
      );
    });
  };
}

/** True when the body has a Content-Encoding other than identity. */
function compressed(req: Request): boolean {
  const encoding = req.headers['content-encoding'];
  return encoding !== undefined && encoding.trim().toLowerCase() !== 'identity';
}

/** The request's charset (lower case; utf-8 when not given). */
function charsetOf(req: Request): string {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '');
  const charset = m ? m[1].toLowerCase() : 'utf-8';
  return charset === 'utf8' ? 'utf-8' : charset;
}

/** A large-request slot, released when the response is done; null (after answering 429) when none is free. */
function takeLargeSlot(req: Request, next: (err?: unknown) => void): (() => void) | null {
  try {
    const release = req.api.large.acquire(
      req.principal?.projectId ?? null,
      `a JSON body of ${req.headers['content-length'] ?? 'more than ' + LARGE_BODY_BYTES} bytes`,
    );
    return release;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    next(err);
    return null;
  }
}
