// Giving the event loop turns (src/core/turns.ts): work that resumes after a turn starts a stretch of its own, so
// a request resumed right after a big write's slice runs its next steps instead of yielding again at once.
import { describe, expect, it } from 'vitest';
import { heldMs, yieldIfHeld } from '../../src/core/turns.js';

/** Keeps the event loop busy for `ms`. */
function hold(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('turns', () => {
  it('yields once the loop has been held past the threshold, not before', async () => {
    heldMs();
    expect(yieldIfHeld()).toBeUndefined();
    hold(10);
    const t = yieldIfHeld();
    expect(t).toBeInstanceOf(Promise);
    await t;
  });

  it('work resumed after another task held the loop gets its own stretch', async () => {
    heldMs();
    hold(10);
    // Two tasks wait for a turn; the first holds the loop 10 ms when it resumes (a slice of a big write).
    const first = yieldIfHeld()!.then(() => {
      heldMs();
      hold(10);
    });
    let second = '';
    const next = yieldIfHeld()!.then(() => {
      second = yieldIfHeld() === undefined ? 'ran on' : 'yielded again';
    });
    await Promise.all([first, next]);
    expect(second).toBe('ran on');
  });
});
