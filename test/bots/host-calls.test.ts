// The bot-side `medplum` client against a real server: searchOne, updateResource and deleteResource change the
// stored data as a REST client sees it; and the host-call budgets (bytes per execution, writes per second per
// project) refuse inside the bot, naming the setting, and show in the execution record.
import { describe, expect, it } from 'vitest';
import { call, useTestServer } from '../helpers/server.js';
import { createBot, execute, gql } from './helpers.js';

const BYTES = 200_000;
const WRITES_PER_SECOND = 5;
const server = useTestServer({
  signIn: true,
  config: { botHostBytesPerExecution: BYTES, botProjectWritesPerSecond: WRITES_PER_SECOND },
});

/** The newest execution records of a bot (recorded within about a second). */
async function records(id: string) {
  await new Promise((r) => setTimeout(r, 600));
  const q = await gql(
    server,
    server.token,
    `query($id: String!) { botExecutions(botId: $id, limit: 5) { outcome status hostCalls hostBytes hostRefused } }`,
    { id },
  );
  expect(q.body.errors).toBeUndefined();
  return q.body.data.botExecutions as Array<{
    outcome: string;
    hostCalls: number;
    hostBytes: number;
    hostRefused: string | null;
  }>;
}

describe('the medplum client: searchOne, updateResource, deleteResource', () => {
  it('finds one, updates it and deletes another, as REST then sees', async () => {
    const vs = (name: string) => ({
      resourceType: 'ValueSet',
      url: `https://example.com/vs/${name}`,
      name,
      status: 'draft',
      title: `${name} (first)`,
    });
    const keep = await call(server.base, 'POST', 'fhir/R4/ValueSet', {
      token: server.token,
      body: vs('Keep'),
    });
    const drop = await call(server.base, 'POST', 'fhir/R4/ValueSet', {
      token: server.token,
      body: vs('Drop'),
    });
    expect([keep.status, drop.status]).toEqual([201, 201]);
    const id = await createBot(
      server,
      server.token,
      `export async function handler(medplum) {
        const found = await medplum.searchOne('ValueSet', { name: 'Keep' });
        const none = await medplum.searchOne('ValueSet', { name: 'NoSuchValueSet' });
        const updated = await medplum.updateResource({ ...found, title: 'Keep (updated by a bot)', status: 'active' });
        const drop = await medplum.searchOne('ValueSet', { url: 'https://example.com/vs/Drop' });
        const deleted = await medplum.deleteResource('ValueSet', drop.id);
        let readAfter = '';
        try { await medplum.readResource('ValueSet', drop.id); } catch (e) { readAfter = e.message; }
        return { foundId: found.id, none: none === undefined, updated: updated.meta.versionId, dropId: drop.id,
          deleted: deleted === undefined, readAfter };
      }`,
    );
    const r = await execute(server, server.token, id, '{}');
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      foundId: keep.body.id,
      none: true,
      updated: '2',
      dropId: drop.body.id,
      deleted: true,
      readAfter: expect.stringMatching(/not found/i),
    });
    const kept = await call(server.base, 'GET', `fhir/R4/ValueSet/${keep.body.id}`, { token: server.token });
    expect(kept.body).toMatchObject({
      title: 'Keep (updated by a bot)',
      status: 'active',
      meta: { versionId: '2' },
    });
    const gone = await call(server.base, 'GET', `fhir/R4/ValueSet/${drop.body.id}`, { token: server.token });
    expect(gone.status).toBe(404);
    const [rec] = await records(id);
    expect(rec).toMatchObject({ outcome: 'success', hostCalls: 6, hostRefused: null });
    expect(rec.hostBytes).toBeGreaterThan(0);
  });
});

describe('host-call budgets', () => {
  it('refuses calls past BOT_HOST_BYTES_PER_EXECUTION inside the bot; the record names the budget', async () => {
    const id = await createBot(
      server,
      server.token,
      `export async function handler(medplum) {
        const text = 'x'.repeat(30000);
        let reads = 0;
        try {
          for (;;) { await medplum.searchResources('ValueSet', { name: text.slice(0, 100) + reads }); reads++;
            await medplum.valueSetExpand({ url: text }).catch((e) => { if (/BOT_HOST/.test(e.message)) throw e; }); }
        } catch (e) { return { reads, message: e.message }; }
      }`,
    );
    const r = await execute(server, server.token, id, '{}');
    expect(r.status, r.text).toBe(200);
    expect(r.body.message).toBe(
      `This execution's medplum/fetch calls have moved more than ${BYTES} bytes of JSON, its budget ` +
        '(BOT_HOST_BYTES_PER_EXECUTION)',
    );
    // About 30 kB per round: the budget of 200 kB stops it within seven rounds.
    expect(r.body.reads).toBeGreaterThan(0);
    expect(r.body.reads).toBeLessThanOrEqual(7);
    const [rec] = await records(id);
    expect(rec.outcome).toBe('success');
    expect(rec.hostRefused).toMatch(/BOT_HOST_BYTES_PER_EXECUTION/);
    expect(rec.hostBytes).toBeGreaterThan(BYTES);
    // Every call counted, the refused one included (a search or an expansion, whichever spent the budget).
    expect([2 * r.body.reads, 2 * r.body.reads + 1]).toContain(rec.hostCalls);
  });

  it("paces a project's writes to BOT_PROJECT_WRITES_PER_SECOND; what was refused was not stored", async () => {
    // Let the bucket refill after the writes of the tests before.
    await new Promise((r) => setTimeout(r, 1000));
    const id = await createBot(
      server,
      server.token,
      `export async function handler(medplum) {
        const results = await Promise.allSettled(Array.from({ length: 25 }, (_, i) =>
          medplum.createResource({ resourceType: 'ValueSet', name: 'Paced', url: 'https://example.com/paced/' + i,
            status: 'draft' })));
        return { ok: results.filter((r) => r.status === 'fulfilled').length,
          errors: [...new Set(results.filter((r) => r.status === 'rejected').map((r) => r.reason.message))] };
      }`,
    );
    const r = await execute(server, server.token, id, '{}');
    expect(r.status, r.text).toBe(200);
    // The burst of 5, then one each 200 ms for at most a second: about 10 of the 25.
    expect(r.body.ok).toBeGreaterThanOrEqual(WRITES_PER_SECOND);
    expect(r.body.ok).toBeLessThanOrEqual(3 * WRITES_PER_SECOND);
    expect(r.body.errors).toEqual([
      `Too many writes: this project's bots may write ${WRITES_PER_SECOND} resources per second ` +
        '(BOT_PROJECT_WRITES_PER_SECOND); retry shortly',
    ]);
    const stored = await call(server.base, 'GET', 'fhir/R4/ValueSet?name=Paced&_summary=count', {
      token: server.token,
    });
    expect(stored.body.total).toBe(r.body.ok);
    const [rec] = await records(id);
    expect(rec).toMatchObject({
      hostCalls: 25,
      hostRefused: expect.stringMatching(/BOT_PROJECT_WRITES_PER_SECOND/),
    });
  });
});
