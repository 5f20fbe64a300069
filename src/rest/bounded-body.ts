// A raw request body read with its size bounded after Content-Encoding is undone, and the inflation itself bounded:
// the compressed bytes are read (at most `max` of them), then inflated in one synchronous call that stops at `max`
// bytes of output (zlib's maxOutputLength). body-parser inflates through a zlib stream that turns each compressed
// chunk it is given into all of its output before the limit is checked: on Node 24, 122 KB of gzip to a bot's
// $execute grew the process by 130 MB before its 413. Errors carry body-parser's shapes (status and type), so the
// callers' mapping to OperationOutcomes is unchanged.
import zlib from 'node:zlib';
import type { RequestHandler } from 'express';

/** An error as body-parser makes it (status, type), for the same handling downstream. */
function bodyParserError(status: number, type: string, message: string, extra: object = {}): Error {
  return Object.assign(new Error(message), { status, type, expose: true }, extra);
}

/** The synchronous inflater of a Content-Encoding, or undefined for identity; null when not supported. */
function inflaterOf(encoding: string): ((buf: Buffer, opts: zlib.ZlibOptions) => Buffer) | undefined | null {
  switch (encoding) {
    case 'identity':
      return undefined;
    case 'gzip':
    case 'x-gzip':
      return zlib.gunzipSync;
    case 'deflate':
      return zlib.inflateSync;
    case 'br':
      return (buf, opts) => zlib.brotliDecompressSync(buf, opts as zlib.BrotliOptions);
    default:
      return null;
  }
}

/** Reads the body into `req.body` (a Buffer) when it is at most `max` bytes once decoded; else 413 (body-parser's
 * `entity.too.large`), 415 for an encoding it cannot undo, 400 for a corrupt compressed body. */
export function boundedRawBody(max: number): RequestHandler {
  return (req, _res, next) => {
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    const inflate = inflaterOf(encoding);
    if (inflate === null) {
      next(
        bodyParserError(415, 'encoding.unsupported', `unsupported content encoding "${encoding}"`, {
          encoding,
        }),
      );
      return;
    }
    const tooLarge = () =>
      bodyParserError(413, 'entity.too.large', 'request entity too large', { limit: max });
    const chunks: Buffer[] = [];
    let received = 0;
    let done = false;
    const finish = (err?: unknown) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', finish);
      req.off('close', onClose);
      if (err) {
        // The rest is discarded as it arrives (closing the socket mid-upload makes clients drop the answer).
        req.resume();
        next(err);
        return;
      }
      next();
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > max) finish(tooLarge());
      else chunks.push(chunk);
    };
    const onEnd = () => {
      const raw = Buffer.concat(chunks);
      if (!inflate) {
        req.body = raw;
        return finish();
      }
      try {
        // maxOutputLength: zlib stops as soon as the output would pass it.
        req.body = inflate(raw, { maxOutputLength: max });
        finish();
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (code === 'ERR_BUFFER_TOO_LARGE') finish(tooLarge());
        else finish(bodyParserError(400, 'entity.parse.failed', `The ${encoding} body could not be decoded`));
      }
    };
    // A client that goes away before the end: nothing to answer, but the request must not wait forever.
    const onClose = () => {
      if (!req.complete) finish(bodyParserError(400, 'request.aborted', 'request aborted'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', finish);
    req.on('close', onClose);
  };
}
