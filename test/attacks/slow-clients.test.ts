// Slow clients: a body trickled one byte at a time kept its connection (and request) open for ever, and one
// address could open any number of connections. Now: 408 once REQUEST_TIMEOUT (or, for headers, HEADERS_TIMEOUT)
// runs out, and connections over MAX_CONNECTIONS_PER_ADDRESS are closed at once.
import { describe, expect, it } from 'vitest';
import { withTestServer } from '../helpers/server.js';
import { expectContained, underAttack, useAttackTarget } from './harness.js';
import { connect, statuses, waitFor, type RawConnection } from './raw-http.js';

const target = useAttackTarget({ REQUEST_TIMEOUT: '2000', MAX_CONNECTIONS_PER_ADDRESS: '8' });

/** Sends `first`, then `next()` every `everyMs` until the server closes the connection (or the attack is given
 * up); answers the status the server wrote, and what it wrote. */
async function trickle(
  port: number,
  first: string,
  next: () => string,
  everyMs: number,
  signal: AbortSignal,
): Promise<{ status: number; body: string }> {
  const c = await connect(port);
  c.socket.write(first);
  const timer = setInterval(() => c.socket.write(next()), everyMs);
  try {
    await Promise.race([
      c.whenClosed,
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
    ]);
  } finally {
    clearInterval(timer);
    c.socket.destroy();
  }
  return { status: statuses(c.received())[0] ?? 0, body: c.received() };
}

describe('slow clients', () => {
  it('a body trickled one byte every 500 ms is answered 408 when REQUEST_TIMEOUT runs out', async () => {
    const o = await underAttack(target, (signal) =>
      trickle(
        target.port,
        'POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
        () => ' ',
        500,
        signal,
      ),
    );
    expectContained(o, { status: 408 });
  });

  it('headers trickled one line every 250 ms are answered 408 when HEADERS_TIMEOUT runs out', async () => {
    // A server of its own (in this process: a stalled header line stalls nothing else), REQUEST_TIMEOUT far beyond
    // the test's 5 s: only HEADERS_TIMEOUT (1 s) can cut it off.
    await withTestServer({ config: { requestTimeoutMs: 120_000, headersTimeoutMs: 1_000 } }, async (own) => {
      let n = 0;
      // Never ends the headers: a header line at a time, for as long as the server keeps the connection.
      const o = await underAttack(own, (signal) =>
        trickle(
          Number(new URL(own.base).port),
          'GET /healthz HTTP/1.1\r\nHost: x\r\n',
          () => `X-Slow-${n++}: 1\r\n`,
          250,
          signal,
        ),
      );
      expectContained(o, { status: 408 });
    });
  }, 60_000);

  it('connections over MAX_CONNECTIONS_PER_ADDRESS from one address are closed at once', async () => {
    const conns: RawConnection[] = [];
    for (let i = 0; i < 14; i++) conns.push(await connect(target.port));
    await waitFor(() => conns.filter((c) => c.closed()).length >= 6, 2_000);
    const closed = conns.filter((c) => c.closed()).length;
    for (const c of conns) c.socket.destroy();
    expect(closed, 'connections closed by the server').toBeGreaterThanOrEqual(6);
    await new Promise((r) => setTimeout(r, 200));
    const r = await fetch(`${target.base}healthz`);
    expect(r.status).toBe(200);
  });
});
