// Answers of the REST terminology operations, kept as the bytes sent (issue 26). A validator sends the same request
// again and again: POST $validate-code with its ValueSet and CodeSystem inline, GET $validate-code of one code. The
// answer is a function of the request and of the terminology the caller sees, so an identical request is answered
// from here until anything of that terminology changes: every change bumps the service's generation (this
// instance's writes at once, other instances' through the database's notifications, imports and the core load
// with '*'), and an answer is kept under the generation it was computed in, only when no change came meanwhile.
// While the database's notifications are not being received (generation undefined), nothing is cached.
//
// What makes two requests identical: method, path and query string exactly, the body's bytes, the headers an
// answer reads (Accept-Language, X-TOO-COSTLY-THRESHOLD), and who asks (project, membership, admin flag, scope: one
// project never gets, nor times, another's answer). Only 200 answers are kept, small ones, in a bounded LRU.
import crypto from 'node:crypto';
import type { Request } from 'express';
import { LRUCache } from 'lru-cache';

/** Memory the kept answers may take. */
const MAX_BYTES = 16 * 1024 * 1024;
/** The largest answer kept (an expansion page or a validation result is a few KB; a whole expansion is not). */
const MAX_ANSWER_BYTES = 64 * 1024;
/** The largest request body an answer is kept for (a validator's inline resources; larger bodies are hashed for
 * nothing). */
const MAX_BODY_BYTES = 256 * 1024;

/** Kept answers by request identity and generation. */
export class AnswerCache {
  private readonly answers = new LRUCache<string, Buffer>({
    maxSize: MAX_BYTES,
    sizeCalculation: (bytes, key) => bytes.length + key.length,
  });

  /** The key of a request under `generation`, or undefined when its answer is not to be kept (no generation, no
   * caller, a body too big or not read as bytes). */
  keyOf(req: Request, generation: number | undefined): string | undefined {
    const who = req.principal;
    if (generation === undefined || !who) return undefined;
    const body = req.rawBody;
    if (req.method === 'POST' && (body === undefined || body.length > MAX_BODY_BYTES)) return undefined;
    const hash = crypto.createHash('sha256');
    for (const part of [
      req.method,
      req.originalUrl,
      who.projectId,
      who.membershipId,
      who.admin ? '1' : '0',
      who.scope,
      header(req, 'accept-language'),
      header(req, 'x-too-costly-threshold'),
    ])
      hash.update(part).update('\0');
    if (body) hash.update(body);
    return `${generation}:${hash.digest('base64')}`;
  }

  /** The kept answer of a key. */
  get(key: string): Buffer | undefined {
    return this.answers.get(key);
  }

  /** Keeps an answer (when small enough). */
  set(key: string, bytes: Buffer): void {
    if (bytes.length <= MAX_ANSWER_BYTES) this.answers.set(key, bytes);
  }
}

function header(req: Request, name: string): string {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : (v ?? '');
}
