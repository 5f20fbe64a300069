// The embedded database gives the event loop a turn before a statement once the loop has been held, and not in the
// middle of one: a turn between a statement's protocol messages let other work run while the database was held,
// and put each request's statements behind ~5 slices of a big write each (a sign-in: 200 ms, up to 1 s on CI).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { heldMs, turnsGiven } from '../../src/core/turns.js';

let db: Database;

beforeAll(async () => {
  db = await openDatabase({ migrate: false });
});

afterAll(async () => {
  await db?.close();
});

/** Keeps the event loop busy for `ms` (as a big write's parse does between its statements). */
function hold(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('turns on the embedded database', () => {
  it('a turn before a statement on a held loop, none between its messages while it holds the database', async () => {
    await db.sql('SELECT 1 AS one');
    const before = turnsGiven();
    // The loop's clock starts at the first check in a stretch: start it, then hold the loop past the threshold.
    heldMs();
    hold(20);
    // pg_sleep runs in the execute message: 30 ms of holding the loop before the statement's sync.
    const rows = await db.sql<{ n: number }>('SELECT $1::int + 1 AS n, pg_sleep(0.03)', [41]);
    expect(rows[0].n).toBe(42);
    expect(turnsGiven() - before).toBe(1);
  });

  it('a chain of statements that holds the loop still lets timers run between them', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    await new Promise((r) => setTimeout(r, 5));
    ticks = 0;
    for (let i = 0; i < 10; i++) {
      hold(10);
      await db.sql('SELECT $1::int AS i', [i]);
    }
    const during = ticks;
    clearInterval(timer);
    // The chain holds the loop >= 100 ms: without turns between its statements no timer would run until it ended.
    expect(during).toBeGreaterThanOrEqual(2);
  });
});
