// PGlite runs PostgreSQL in WebAssembly on the main thread: every protocol message (parse, bind, execute, ...) is
// executed synchronously (execProtocolRawSync), and a chain of awaited queries resolves as microtasks. A bulk write
// of a hundred statements therefore held the event loop for its whole duration (15-23 s for a 600,000-concept
// CodeSystem): no timer, no other request, not even /healthz ran in between. Here every protocol message first
// gives the event loop a turn when it has been held longer than a few milliseconds (src/core/turns.ts). Queries
// still run one at a time (PGlite's own mutexes): the turn lets other requests' JavaScript run, and queues their
// statements behind the current one. A single statement cannot be interrupted: callers keep each one short
// (small batches, paged reads).
import type { PGlite } from '@electric-sql/pglite';
import { TURN_AFTER_MS, yieldIfHeld } from '../core/turns.js';

type RawExec = PGlite['execProtocolRaw'];
type RawStream = PGlite['execProtocolRawStream'];

/** Makes `client` give the event loop a turn before a protocol message once the loop has been held `afterMs`. */
export function giveTurns(client: PGlite, afterMs = TURN_AFTER_MS): void {
  // Instance properties shadow the prototype's methods: PGlite's query, exec and transaction paths (and the
  // Prisma adapter, which uses them) all reach the database through these two.
  const raw: RawExec = client.execProtocolRaw.bind(client);
  const stream: RawStream = client.execProtocolRawStream.bind(client);
  client.execProtocolRaw = async (message, options) => {
    const t = yieldIfHeld(afterMs);
    if (t) await t;
    return raw(message, options);
  };
  client.execProtocolRawStream = async (message, options) => {
    const t = yieldIfHeld(afterMs);
    if (t) await t;
    return stream(message, options);
  };
}
