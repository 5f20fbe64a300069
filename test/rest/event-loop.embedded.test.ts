// The event-loop watchdog: a stall is visible in /healthz (p50/p99/max of the event-loop delay).
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

describe('event-loop watchdog', () => {
  it('reports a 300 ms stall of the event loop in /healthz', async () => {
    // The server runs in this process: holding the test's event loop holds the server's.
    await new Promise((r) => setTimeout(r, 50));
    const until = performance.now() + 300;
    while (performance.now() < until) {
      // busy
    }
    await new Promise((r) => setTimeout(r, 50));
    const r = await fetch(`${server.base}healthz`);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { status: string; eventLoop?: Record<string, number> };
    expect(body.status).toBe('ok');
    expect(body.eventLoop, JSON.stringify(body)).toBeDefined();
    expect(body.eventLoop!.maxMs).toBeGreaterThanOrEqual(250);
    expect(body.eventLoop!.worstMs).toBeGreaterThanOrEqual(250);
    expect(body.eventLoop!.p99Ms).toBeGreaterThan(0);
  });
});
