// What an execution answers: the isolate's result decoded and checked (size, BotResponse status and headers), or
// the failure classified (timeout, memory, error), disposing the isolate when it has to go.
import type { ExecState } from './execution.js';
import { FORBIDDEN_RESPONSE_HEADERS, HEADER_NAME, HEADER_VALUE } from './headers.js';
import type { IsolateEntry } from './isolate-entry.js';
import type { BotValue, ExecutionErrorKind, ResponseBody } from './types.js';

/** The answer for an execution past its deadline. */
export function timeoutError(timeoutMs: number): { ok: false; error: 'timeout'; message: string } {
  return { ok: false, error: 'timeout', message: `Bot execution timed out after ${timeoutMs} ms` };
}

/** The answer for an execution whose isolate ran out of memory. */
export function memoryError(memoryMb: number): { ok: false; error: 'memory'; message: string } {
  return { ok: false, error: 'memory', message: `Bot exceeded its memory limit of ${memoryMb} MB` };
}

/** What a failed execution answers, from the error its call into the isolate ended with; disposes the isolate
 * when the failure leaves it unusable. */
export function classify(
  err: unknown,
  exec: ExecState,
  entry: IsolateEntry,
  timeoutMs: number,
  memoryMb: number,
): { ok: false; error: ExecutionErrorKind; message: string } {
  const message = err instanceof Error ? err.message : String(err);
  if (exec.timedOut || /timed out/i.test(message)) {
    entry.kill('timeout');
    return timeoutError(timeoutMs);
  }
  if (/memory limit/i.test(message) || entry.dead === 'memory' || (entry.isolate.isDisposed && !entry.dead)) {
    entry.kill('memory');
    return memoryError(memoryMb);
  }
  if (entry.isolate.isDisposed) {
    return {
      ok: false,
      error: 'error',
      message: 'Bot execution aborted: another execution of this bot hit a limit and its isolate was reset',
    };
  }
  // Infrastructure failure inside the isolate (e.g. compiled code that does not parse): message only, no stack.
  entry.kill('setup');
  return { ok: false, error: 'error', message: `${err instanceof Error ? err.name : 'Error'}: ${message}` };
}

/** The execution's value from the isolate's JSON result, or why it cannot be answered (too large, invalid). */
export function decode(
  out: unknown,
  max: number,
): { ok: true; value: BotValue } | { ok: false; error: ExecutionErrorKind; message: string } {
  const tooLarge = (size: number | string): { ok: false; error: 'output-too-large'; message: string } => ({
    ok: false,
    error: 'output-too-large',
    message: `Bot output is too large (${size} bytes, limit ${max})`,
  });
  if (typeof out !== 'string')
    return { ok: false, error: 'error', message: 'Bot returned an invalid result' };
  let parsed: { kind?: unknown; [k: string]: unknown };
  try {
    parsed = JSON.parse(out) as typeof parsed;
  } catch {
    return { ok: false, error: 'error', message: 'Bot returned an invalid result' };
  }
  switch (parsed.kind) {
    case 'undefined':
      return { ok: true, value: { kind: 'undefined' } };
    case 'string':
    case 'hl7': {
      const text = String(parsed.text);
      const size = Buffer.byteLength(text);
      if (size > max) return tooLarge(size);
      return { ok: true, value: { kind: parsed.kind, text } };
    }
    case 'json':
      if (Buffer.byteLength(out) > max + 32) return tooLarge(`more than ${max}`);
      return { ok: true, value: { kind: 'json', json: parsed.json } };
    case 'response':
      if (Buffer.byteLength(out) > max + 1024) return tooLarge(`more than ${max}`);
      return decodeResponse(parsed);
    case 'too-large':
      return tooLarge(`at least ${Number(parsed.size)}`);
    case 'error':
      return { ok: false, error: 'error', message: String(parsed.message) };
    default:
      return { ok: false, error: 'error', message: 'Bot returned an invalid result' };
  }
}

/** A BotResponse's status, content type, allowed headers and body. */
function decodeResponse(
  p: Record<string, unknown>,
): { ok: true; value: BotValue } | { ok: false; error: 'error'; message: string } {
  const status = p.status;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) {
    return { ok: false, error: 'error', message: 'BotResponse status must be an integer from 200 to 599' };
  }
  const headers: Record<string, string> = {};
  const rawHeaders = p.headers && typeof p.headers === 'object' ? (p.headers as Record<string, unknown>) : {};
  for (const [k, v] of Object.entries(rawHeaders)) {
    const value = String(v);
    if (!HEADER_NAME.test(k) || !HEADER_VALUE.test(value) || FORBIDDEN_RESPONSE_HEADERS.test(k)) continue;
    headers[k.toLowerCase()] = value;
  }
  const contentType =
    typeof p.contentType === 'string' && HEADER_VALUE.test(p.contentType) ? p.contentType : undefined;
  if (contentType) headers['content-type'] = contentType;
  const b = p.body as { type?: unknown; text?: unknown; json?: unknown } | undefined;
  const body: ResponseBody =
    b?.type === 'text'
      ? { type: 'text', text: String(b.text) }
      : b?.type === 'json'
        ? { type: 'json', json: b.json }
        : { type: 'empty' };
  return { ok: true, value: { kind: 'response', status, contentType, headers, body } };
}
