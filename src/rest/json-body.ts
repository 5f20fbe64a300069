// JSON body parsing with two checks on the raw bytes before JSON.parse: nesting depth (a body nested 10,000 deep
// reached recursive code and answered 500) and the NUL character `\u0000` (PostgreSQL text cannot hold it, so a
// NUL reached the database and answered 500; FHIR strings do not allow it either). Both are 400s naming the rule.
import express, { type RequestHandler } from 'express';

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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const NUL_ESCAPE = Buffer.from('u0000');

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
          throw new BodyError(
            'The NUL character (\\u0000) is not allowed in a JSON string',
            'entity.nul.character',
          );
        }
        i++;
      } else if (c === QUOTE) {
        inString = false;
      }
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) {
        throw new BodyError(
          `JSON body nested deeper than the limit of ${maxDepth} (JSON_MAX_DEPTH)`,
          'entity.too.deep',
        );
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
}

/** express.json with the depth and NUL checks, for the given content types. */
export function jsonBodyParser(opts: {
  limit: string | number;
  maxDepth: number;
  type: string[];
}): RequestHandler {
  return express.json({
    limit: opts.limit,
    strict: false,
    type: opts.type,
    verify: (_req, _res, buf) => checkJsonBytes(buf, opts.maxDepth),
  });
}
