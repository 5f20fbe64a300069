// The health endpoints: /healthz/live (the process answers), /healthz/ready (503 while draining or while the
// database does not answer; see outage.pg.test.ts for the database) and /healthz (200, the facts, as before).
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { call, startTestServer, useTestServer } from '../helpers/server.js';

const s = useTestServer();

describe('health endpoints', () => {
  it('live, ready and the facts of /healthz, none of them cached by clients', async () => {
    const live = await call(s.base, 'GET', 'healthz/live');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    expect(live.headers.get('cache-control')).toBe('no-store');
    const ready = await call(s.base, 'GET', 'healthz/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok' });
    const facts = await call(s.base, 'GET', 'healthz');
    expect(facts.status).toBe(200);
    expect(facts.body).toMatchObject({ status: 'ok', ready: true, database: expect.any(String) });
    expect((await fetch(`${s.base}healthz/ready`, { method: 'HEAD' })).status).toBe(200);
  });

  it('readiness is 503 "draining" once shutdown has started', async () => {
    const server = await startTestServer();
    const port = new URL(server.base).port;
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    let response = '';
    socket.on('data', (d: Buffer) => (response += d.toString()));
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // A request under way (headers half sent) when the shutdown starts: the drain waits for it.
    socket.write('GET /healthz/ready HTTP/1.1\r\nHost: localhost\r\n');
    await new Promise((r) => setTimeout(r, 100));
    const closing = server.close();
    await new Promise((r) => setTimeout(r, 100));
    socket.write('\r\n');
    await ended;
    await closing;
    expect(response).toMatch(/^HTTP\/1\.1 503 /);
    expect(response).toMatch(/\r\nRetry-After: 5\r\n/i);
    expect(response).toContain('{"status":"unavailable","reason":"draining"}');
  });
});
