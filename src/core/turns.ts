// Giving the event loop a turn during long work. A chain of awaited promises resolves as microtasks: however many
// awaits it contains, timers and I/O (other requests, /healthz) wait until the whole chain is done. Work that can
// run long (an embedded database's statements, a big body's parse, a concept tree's serialisation) asks
// `yieldIfHeld()` between its steps: it resolves at once while the loop has been held only briefly, and after a
// setImmediate (the loop's check phase, after I/O polling) once it has been held longer than the threshold.

/** Held this long (ms) without a turn, work in steps yields before its next step. */
export const TURN_AFTER_MS = 8;

/** performance.now() when the current stretch without a turn began; -1: a turn has happened since. */
let busySince = -1;
let turns = 0;
const clear = (): void => {
  busySince = -1;
};

/** Milliseconds the event loop has been held by the current macrotask and its microtasks (as far as callers of
 * this module noticed: the first call in a stretch starts its clock). */
export function heldMs(): number {
  const now = performance.now();
  if (busySince < 0) {
    busySince = now;
    // Runs at the next check phase, i.e. once the loop has moved on: the stretch is over.
    setImmediate(clear);
    return 0;
  }
  return now - busySince;
}

/** One turn of the event loop (timers and I/O get to run before this resolves, at the latest on the next turn).
 * The work that resumes starts a stretch of its own: without that, work resumed right after another task's slice
 * (in the same check phase) found the clock already past the threshold and yielded again at once, so a request's
 * every statement waited a whole slice of a big write (a sign-in: ten slices, 200-500 ms). */
export function turn(): Promise<void> {
  turns++;
  return new Promise<void>((resolve) =>
    setImmediate(() => {
      busySince = performance.now();
      setImmediate(clear);
      resolve();
    }),
  );
}

/** Gives the event loop a turn when it has been held more than `afterMs`; otherwise resolves at once. */
export function yieldIfHeld(afterMs = TURN_AFTER_MS): Promise<void> | undefined {
  return heldMs() > afterMs ? turn() : undefined;
}

/** How many turns work in steps has given so far (for /healthz and tests). */
export function turnsGiven(): number {
  return turns;
}
