// Which errors mean "the database cannot be reached" (answered 503 transient, not 500), from both drivers, and the
// readiness probe: cached, shared by concurrent callers, never piling up on a database that does not answer.
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/core/errors.js';
import { probeDatabase } from '../../src/db/database.js';

/** An Error with extra fields, as the drivers throw them. */
function err(message: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), fields);
}

describe('isDatabaseUnavailable', () => {
  it.each([
    [
      'pg: connection refused',
      err('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED', syscall: 'connect', errno: -111 }),
    ],
    ['pg: connection reset', err('read ECONNRESET', { code: 'ECONNRESET' })],
    [
      'pg: server shutting down (57P01)',
      err('terminating connection due to administrator command', { code: '57P01', severity: 'FATAL' }),
    ],
    ['pg: server starting up (57P03)', err('the database system is starting up', { code: '57P03' })],
    ['pg: connection failure (08006)', err('connection failure', { code: '08006' })],
    ['pg: connection terminated', err('Connection terminated unexpectedly')],
    ['pg: connect timeout', err('timeout exceeded when trying to connect')],
    ['Prisma P1001', err("Can't reach database server at 127.0.0.1:5432", { code: 'P1001' })],
    ['Prisma P1017', err('Server has closed the connection.', { code: 'P1017' })],
    [
      'Prisma, driver adapter in meta',
      err('x', { code: 'P2010', meta: { driverAdapterError: { cause: { kind: 'DatabaseNotReachable' } } } }),
    ],
    [
      'driver adapter error, postgres 57P01',
      err('x', { name: 'DriverAdapterError', cause: { kind: 'postgres', code: '57P01' } }),
    ],
    ['wrapped in a cause', err('outer', { cause: err('inner', { code: 'ECONNREFUSED' }) })],
    ['AggregateError of refusals', new AggregateError([err('a', { code: 'ECONNREFUSED' })], 'all failed')],
  ])('%s: unreachable', (_name, e) => {
    expect(isDatabaseUnavailable(e)).toBe(true);
  });

  it.each([
    ['a unique violation (23505)', err('duplicate key', { code: '23505' })],
    ['Prisma P2002', err('Unique constraint failed', { code: 'P2002' })],
    ['a syntax error (42601)', err('syntax error', { code: '42601' })],
    ['a plain error', new Error('boom')],
    ['not an error', 'ECONNREFUSED'],
    ['nothing', undefined],
  ])('%s: not unreachable', (_name, e) => {
    expect(isDatabaseUnavailable(e)).toBe(false);
  });
});

describe('probeDatabase', () => {
  it('keeps a result for cacheMs and shares one probe among concurrent callers', async () => {
    let queries = 0;
    const probe = probeDatabase({ sql: async () => (queries++, []) }, { cacheMs: 60_000 });
    expect(probe.cached()).toBeUndefined();
    expect(await Promise.all([probe.check(), probe.check(), probe.check()])).toEqual([true, true, true]);
    expect(await probe.check()).toBe(true);
    expect(probe.cached()).toBe(true);
    expect(queries).toBe(1);
  });

  it('counts a failing or unanswered SELECT 1 as unreachable, and starts no new one while one hangs', async () => {
    let queries = 0;
    let answer: (() => void) | undefined;
    let back = false;
    const hung = probeDatabase(
      {
        sql: () => {
          queries++;
          return back ? Promise.resolve([]) : new Promise((resolve) => (answer = () => resolve([])));
        },
      },
      { cacheMs: 0, timeoutMs: 50 },
    );
    expect(await hung.check()).toBe(false);
    expect(await hung.check()).toBe(false);
    expect(await hung.check()).toBe(false);
    expect(queries).toBe(1);
    // Once the database answers, the next probe asks again and sees it.
    back = true;
    answer?.();
    await new Promise((r) => setTimeout(r, 0));
    expect(await hung.check()).toBe(true);
    expect(queries).toBe(2);

    const failing = probeDatabase({ sql: () => Promise.reject(err('x', { code: 'ECONNREFUSED' })) });
    expect(await failing.check()).toBe(false);
  });
});
