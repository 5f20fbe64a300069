// PGlite runs PostgreSQL in WebAssembly on the main thread: every protocol message (parse, bind, execute, ...) is
// executed synchronously (execProtocolRawSync), and a chain of awaited queries resolves as microtasks. A bulk write
// of a hundred statements therefore held the event loop for its whole duration (15-23 s for a 600,000-concept
// CodeSystem): no timer, no other request, not even /healthz ran in between. Here every statement (its first protocol
// message) gives the event loop a turn when it has been held longer than a few milliseconds (src/core/turns.ts). A single
// statement cannot be interrupted: callers keep each one short (small batches, paged reads).
//
// Queries still run one at a time (PGlite's own mutex, first come first served), so a request whose handler runs
// ten small statements while a bulk job runs a stream of 30 ms ones would wait behind ten of them. Bulk statements
// (backgroundQuery) therefore wait, before they queue, until no other statement has run for QUIET_MS (at most
// MAX_WAIT_MS per statement, so bulk work still moves on a busy server): requests go first.
import type { PGlite } from '@electric-sql/pglite';
import { TURN_AFTER_MS, yieldIfHeld } from '../core/turns.js';

type RawExec = PGlite['execProtocolRaw'];
type RawStream = PGlite['execProtocolRawStream'];

/** A bulk statement waits until other statements have left the database alone this long (ms)... */
const QUIET_MS = 10;
/** ...but no longer than this per statement (ms). */
const MAX_WAIT_MS = 200;

/** Bulk statements are known by this comment at their start (an AsyncLocalStorage context would do, at the price
 * of promise hooks on every promise in the process). */
const BULK_MARK = '/*bulk*/';
const BULK_BYTES = Buffer.from(BULK_MARK);
/** performance.now() of the last protocol message of a statement that was not a bulk one. */
let lastForeground = -Infinity;
/** Whether the statement whose messages are being executed is a bulk one (set by its Parse or Query message). */
let currentIsBulk = false;

/** Whether the next protocol message starts an exchange (the last one ended with a Sync or a simple Query). */
let between = true;

/** Notes a protocol message and says whether it starts an exchange. A Parse ('P': type, length, statement name,
 * text) or simple Query ('Q': type, length, text) message starts a statement; the others belong to the current
 * one, up to its Sync ('S'). */
function note(message: Uint8Array): boolean {
  const type = message[0];
  const starts = between;
  between = type === 0x53 || type === 0x51;
  if (type === 0x50 || type === 0x51) {
    let at = 5;
    if (type === 0x50) {
      while (at < message.length && message[at] !== 0) at++;
      at++;
    }
    currentIsBulk = at + BULK_BYTES.length <= message.length;
    for (let k = 0; currentIsBulk && k < BULK_BYTES.length; k++)
      currentIsBulk = message[at + k] === BULK_BYTES[k];
  }
  if (!currentIsBulk) lastForeground = performance.now();
  return starts;
}

/** Makes `client` give the event loop a turn before a protocol message once the loop has been held `afterMs`, and
 * notes when other than bulk statements run. */
export function giveTurns(client: PGlite, afterMs = TURN_AFTER_MS): void {
  // Instance properties shadow the prototype's methods: PGlite's query, exec and transaction paths (and the
  // Prisma adapter, which uses them) all reach the database through these two.
  const raw: RawExec = client.execProtocolRaw.bind(client);
  const stream: RawStream = client.execProtocolRawStream.bind(client);
  client.execProtocolRaw = async (message, options) => {
    // A turn only before an exchange starts: its later messages (bind, describe, execute, sync) run while it
    // holds the database, and a turn between them let the attacker's bulk work run in every gap while nobody else
    // could query: a sign-in's four statements took ~20 messages, ~20 turns, 200 ms behind a big write.
    const t = note(message) ? yieldIfHeld(afterMs) : undefined;
    if (t) await t;
    return raw(message, options);
  };
  client.execProtocolRawStream = async (message, options) => {
    const t = note(message) ? yieldIfHeld(afterMs) : undefined;
    if (t) await t;
    return stream(message, options);
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs one statement at background priority: first waits for a quiet moment (see the file comment). */
export async function backgroundQuery<T>(text: string, run: (text: string) => Promise<T>): Promise<T> {
  const until = performance.now() + MAX_WAIT_MS;
  for (;;) {
    const now = performance.now();
    const quietFor = now - lastForeground;
    if (quietFor >= QUIET_MS || now >= until) break;
    await sleep(Math.min(QUIET_MS - quietFor, until - now) + 1);
  }
  return run(BULK_MARK + text);
}
