// The embedded database gives the event loop a turn before a statement once the loop has been held, and not in the
// middle of one: a turn between a statement's protocol messages let other work run while the database was held,
// and put each request's statements behind ~5 slices of a big write each (a sign-in: 200 ms, up to 1 s on CI).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { turnsGiven } from '../../src/core/turns.js';

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
    hold(20);
    const before = turnsGiven();
    // pg_sleep runs in the execute message: 30 ms of holding the loop before the statement's sync.
    const rows = await db.sql<{ n: number }>('SELECT $1::int + 1 AS n, pg_sleep(0.03)', [41]);
    expect(rows[0].n).toBe(42);
    expect(turnsGiven() - before).toBe(1);
  });

  it('a chain of statements that holds the loop still lets timers run between them', async () => {
    const ticks: number[] = [];
    const timer = setInterval(() => ticks.push(performance.now()), 1);
    await new Promise((r) => setTimeout(r, 5));
    const start = performance.now();
    for (let i = 0; i < 10; i++) {
      hold(10);
      await db.sql('SELECT $1::int AS i', [i]);
    }
    const end = performance.now();
    clearInterval(timer);
    const during = [start, ...ticks.filter((t) => t > start && t < end), end];
    const gaps = during.slice(1).map((t, k) => t - during[k]);
    // The old code, before any turns, held the loop for the whole chain (>= 100 ms).
    expect(Math.max(...gaps)).toBeLessThan(50);
  });
});
