// Shutdown: after SIGTERM keep-alive connections kept getting new requests served, and a bot whose Map grew to its
// memoryLimit left isolated-vm's thread parked so that process.exit (and the forced exit) waited for ever. Now:
// no new request on any connection, in-flight requests finish, and the process always ends.
import { afterEach, describe, expect, it } from 'vitest';
import { call, signIn } from '../helpers/server.js';
import { startAttackTarget, type AttackTarget } from './harness.js';
import { connect, statuses, waitFor } from './raw-http.js';

let target: AttackTarget | undefined;

afterEach(async () => {
  await target?.close();
  target = undefined;
});

const exited = (t: AttackTarget) =>
  new Promise<number | null>((r) => t.child.once('exit', (code) => r(code)));

describe('shutdown', () => {
  it('drains: idle keep-alives closed, the in-flight request answered with Connection: close, no further request served', async () => {
    target = await startAttackTarget({ SHUTDOWN_GRACE: '5000' });
    const t = target;
    const idle = await connect(t.port);
    idle.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await waitFor(() => statuses(idle.received()).length === 1, 5_000)).toBe(true);

    const body = JSON.stringify({ email: 'nobody@example.com', password: 'wrong-password-1' });
    const busy = await connect(t.port);
    busy.socket.write(
      `POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n` +
        body.slice(0, 5),
    );
    await new Promise((r) => setTimeout(r, 200));

    const exit = exited(t);
    const stoppedAt = Date.now();
    t.child.kill('SIGTERM');
    // The idle keep-alive connection is closed without waiting for a request.
    expect(await waitFor(() => idle.closed(), 2_000), 'idle keep-alive closed').toBe(true);

    // The in-flight request finishes; a request pipelined behind it on the same connection is not served.
    busy.socket.write(body.slice(5) + 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await waitFor(() => busy.closed(), 4_000), 'busy connection closed after its answer').toBe(true);
    const answers = statuses(busy.received());
    expect(answers.length, busy.received()).toBe(1);
    expect(answers[0]).toBeGreaterThanOrEqual(400);
    expect(answers[0]).toBeLessThan(500);
    expect(busy.received()).toMatch(/connection: close/i);

    expect(await exit).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(5_000);
  }, 90_000);

  it('ends after SIGTERM even when a bot ran out of memory growing a Map', async () => {
    target = await startAttackTarget({ SHUTDOWN_GRACE: '2000' });
    const t = target;
    const token = (await signIn(t.base)).access_token;
    const created = await call(t.base, 'POST', 'fhir/R4/Bot', {
      token,
      body: {
        resourceType: 'Bot',
        name: 'map grower',
        memoryLimit: 64,
        timeout: 20,
        code: `export async function handler() {
  const m = (globalThis.grown ??= new Map());
  for (let i = 0; ; i++) m.set(m.size, { i, s: 'x'.repeat(64) + i });
}`,
      },
    });
    expect(created.status, created.text).toBe(201);
    const run = await call(t.base, 'POST', `fhir/R4/Bot/${created.body.id}/$execute`, {
      token,
      raw: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(run.status, run.text).toBeGreaterThanOrEqual(400);

    const exit = exited(t);
    const stoppedAt = Date.now();
    t.child.kill('SIGTERM');
    const timedOut = Symbol('timed out');
    const result = await Promise.race([exit, new Promise((r) => setTimeout(() => r(timedOut), 25_000))]);
    expect(result, 'the process ended').not.toBe(timedOut);
    expect(Date.now() - stoppedAt).toBeLessThan(25_000);
  }, 90_000);
});
