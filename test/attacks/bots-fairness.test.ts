// Attacks: bots that fan out (one request, thousands of executions) or flood the host with timers.
// Before: a 6-wide bot-calls-bot tree 5 deep (9,331 executions) took 22 s and stalled the event loop 10 s;
// 4 bots x 999 setInterval(0) raised /healthz p50 from 5 to 131 ms.
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/server.js';
import { expectContained, underAttack, useAttackTarget } from './harness.js';

const target = useAttackTarget({}, { signIn: true });

async function createBot(code: string): Promise<string> {
  const r = await call(target.base, 'POST', 'fhir/R4/Bot', {
    token: target.token,
    body: { resourceType: 'Bot', name: 'attack', code, timeout: 20 },
  });
  if (r.status !== 201) throw new Error(`create bot failed: ${r.status} ${r.text}`);
  return r.body.id as string;
}

const executeBot = (id: string, body: string, signal: AbortSignal) =>
  fetch(`${target.base}fhir/R4/Bot/${id}/$execute`, {
    method: 'POST',
    signal,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.token}` },
    body,
  });

describe('bots under attack', () => {
  it('a bot-calls-bot tree 6 wide and 5 deep is stopped early with a 4xx naming the limit', async () => {
    const id = await createBot(`export async function handler(medplum, event) {
      const level = event.input.level ?? 0;
      if (level >= 5) return 1;
      const self = event.bot.reference.slice(4);
      const counts = await Promise.all(
        Array.from({ length: 6 }, () => medplum.executeBot(self, { level: level + 1 }, 'application/json')));
      return counts.reduce((a, b) => a + b, 1);
    }`);
    const o = await underAttack(target, (signal) => executeBot(id, '{}', signal));
    console.info(
      `[attack] ${expect.getState().currentTestName}: ${o.status} in ${o.ms.toFixed(0)} ms, worst /healthz ${o.worstHealthMs.toFixed(0)} ms`,
    );
    expectContained(o);
    expect(o.status).toBeGreaterThanOrEqual(400);
    expect(o.body).toMatch(/at most \d+ bot executions|bot executions at once/);
  });

  it('4 bots x 999 setInterval(0) do not slow the server', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(
        await createBot(`export async function handler() {
          let ticks = 0;
          for (let i = 0; i < 999; i++) setInterval(() => { ticks++; }, 0);
          await new Promise((r) => setTimeout(r, 2500));
          return ticks > 0 ? 'ticked' : 'never ticked';
        }`),
      );
    const o = await underAttack(target, async (signal) => {
      const rs = await Promise.all(ids.map((id) => executeBot(id, '{}', signal)));
      const texts = await Promise.all(rs.map((r) => r.text()));
      const bad = rs.findIndex((r) => r.status !== 200);
      return bad >= 0 ? { status: rs[bad].status, body: texts[bad] } : { status: 200, body: texts.join(',') };
    });
    console.info(
      `[attack] ${expect.getState().currentTestName}: ${o.status} in ${o.ms.toFixed(0)} ms, worst /healthz ${o.worstHealthMs.toFixed(0)} ms`,
    );
    expectContained(o, { status: 200 });
    expect(o.body).toBe('ticked,ticked,ticked,ticked');
  });
});
