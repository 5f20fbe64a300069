// TERMINOLOGY_INDEX_BUDGET_MB: over the budget, the least recently resolved code system index is dropped (the
// server logs which) and rebuilt when next used, with the same expansion. Read from the server's own log lines, as
// an operator would: no timing.
import { Writable } from 'node:stream';
import pino from 'pino';
import { expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import { ADMIN_PASSWORD, call, signIn, withTestServer } from '../helpers/server.js';

const DROPPED = 'dropped a code system index (budget)';

/** Runs `fn` on a server of its own whose info log lines are collected (the test helpers log nowhere). */
async function withLoggedServer(
  config: Partial<Config>,
  fn: (base: string, logs: Array<Record<string, unknown>>) => Promise<void>,
): Promise<void> {
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
      cb();
    },
  });
  await withTestServer({ config, logger: pino({ level: 'info' }, sink) }, (server) => fn(server.base, logs));
}

it('over TERMINOLOGY_INDEX_BUDGET_MB the least recently used index is dropped, and rebuilt when used', async () => {
  // About 1 KB: any two of the code systems below exceed it, one alone is kept (the index just built never is
  // dropped for itself).
  await withLoggedServer({ terminologyIndexBudgetMb: 0.001 }, async (base, logs) => {
    const token = (await signIn(base, 'admin@example.com', ADMIN_PASSWORD)).access_token;
    const ids: Record<string, string> = {};
    for (const name of ['a', 'b', 'c']) {
      const concept = Array.from({ length: 40 }, (_, i) => ({
        code: `${name}${i}`,
        display: `${name} ${i}`,
      }));
      const r = await call(base, 'POST', 'fhir/R4/CodeSystem', {
        token,
        body: {
          resourceType: 'CodeSystem',
          url: `http://example.org/cs/budget-${name}`,
          status: 'active',
          content: 'complete',
          concept,
        },
      });
      expect(r.status).toBe(201);
      ids[name] = r.body.id;
    }
    const expand = async (name: string, extra: unknown[] = []) => {
      const r = await call(base, 'POST', 'fhir/R4/ValueSet/$expand', {
        token,
        body: {
          resourceType: 'Parameters',
          parameter: [
            {
              name: 'valueSet',
              resource: {
                resourceType: 'ValueSet',
                compose: { include: [{ system: `http://example.org/cs/budget-${name}` }] },
              },
            },
            ...extra,
          ],
        },
      });
      expect(r.status).toBe(200);
      return (r.body.expansion.contains as Array<{ code: string }>).map((c) => c.code);
    };
    const dropped = () => logs.filter((l) => l.msg === DROPPED).map((l) => l.codeSystem);

    const first = await expand('a');
    expect(first).toHaveLength(40);
    expect(dropped()).toEqual([]);
    await expand('b');
    expect(dropped()).toEqual([ids.a]);
    await expand('c');
    expect(dropped()).toEqual([ids.a, ids.b]);
    // a's index was dropped: it is built again (c, now the least recently used, goes), with the same answer. (A
    // request that differs from the first: an identical one is answered from the kept answers, no index needed.)
    expect(await expand('a', [{ name: 'count', valueInteger: 100 }])).toEqual(first);
    expect(dropped()).toEqual([ids.a, ids.b, ids.c]);
  });
}, 60_000);
