// The event-loop watchdog: a stall is visible in /healthz (p50/p99/max of the event-loop delay), and in the worst
// delay since a given moment (`/healthz?since=`), which a stall before that moment does not reach. Every other
// answer carries the server's own time for it (Server-Timing).
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

describe('event-loop watchdog', () => {
  it('reports a 300 ms stall of the event loop in /healthz', async () => {
    // The server runs in this process: holding the test's event loop holds the server's.
    await new Promise((r) => setTimeout(r, 50));
    const before = Date.now();
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

    const since = async (at: number) => {
      const h = await fetch(`${server.base}healthz?since=${at}`);
      return ((await h.json()) as { eventLoop: { recent: { since: number; maxMs: number } } }).eventLoop
        .recent;
    };
    expect(await since(before)).toMatchObject({ since: before });
    expect((await since(before)).maxMs).toBeGreaterThanOrEqual(250);
    // Once the stall's window (250 ms) has closed, a later moment does not see it.
    await new Promise((r) => setTimeout(r, 600));
    expect((await since(Date.now())).maxMs).toBeLessThan(250);
  });

  it('gives every answer but /healthz its time on the server (Server-Timing)', async () => {
    const r = await fetch(`${server.base}fhir/R4/metadata`);
    expect(r.status).toBe(200);
    expect(r.headers.get('server-timing')).toMatch(/^app;dur=\d+\.\d{2}$/);
    const missing = await fetch(`${server.base}no-such-path`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('server-timing')).toMatch(/^app;dur=/);
    expect((await fetch(`${server.base}healthz`)).headers.get('server-timing')).toBeNull();
  });
});
