// Concept generations (docs/terminology.md, Large CodeSystems): a write's concepts are invisible until its one short final
// transaction; a write that fails, or a process killed between the two steps, leaves nothing visible and its rows
// are removed; replaced and deleted concepts go in the background, never from under a reader.
import { beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { readConceptPages } from '../../src/terminology/concept-pages.js';
import { ABANDONED_AFTER_MS, beginGeneration, insertConceptRows } from '../../src/terminology/generations.js';
import { writeTerminologyResource } from '../../src/terminology/resource-write.js';
import { useTestDatabase } from '../helpers/database.js';
import { call, onPostgres, signIn, useTestServer } from '../helpers/server.js';

const s = useTestServer({ signIn: true });
let token: string;
let projectId: string;

beforeAll(async () => {
  token = s.token;
  const me = await call(s.base, 'GET', 'auth/me', { token });
  projectId = me.body.project.id;
});

const rows = (n: number, prefix = 'c') =>
  Array.from({ length: n }, (_, i) => ({
    code: `${prefix}${i}`,
    display: `Concept ${i}`,
    parents: [] as string[],
  }));

async function conceptRows(codeSystemId: string): Promise<number> {
  const [r] = await s.services.db.sql<{ n: number }>(
    `SELECT count(*)::int AS n FROM "Concept" WHERE "codeSystemId" = $1::uuid`,
    [codeSystemId],
  );
  return r.n;
}

async function generations(codeSystemId: string): Promise<string[]> {
  const r = await s.services.db.sql<{ state: string }>(
    `SELECT state FROM "ConceptGeneration" WHERE "codeSystemId" = $1::uuid ORDER BY id`,
    [codeSystemId],
  );
  return r.map((g) => g.state);
}

describe('concept generations', () => {
  it('a write that fails half-way (a statement refused by the database) leaves nothing visible and nothing behind', async () => {
    const t = s.services.terminology;
    // More rows than one statement takes (250 on PGlite, 5,000 on PostgreSQL); the last batch repeats a code, as
    // no validated body can: the unique index refuses it after the first batches were committed.
    const bad = [...rows(6000), { code: 'c0', display: 'again', parents: [] }];
    const url = 'http://example.org/generations/failing';
    await expect(
      writeTerminologyResource(
        t.db,
        t.generations,
        'CodeSystem',
        { resourceType: 'CodeSystem', url, status: 'active' },
        {
          projectId,
          concepts: bad,
        },
      ),
    ).rejects.toThrow(/duplicate key/);
    const search = await call(s.base, 'GET', `fhir/R4/CodeSystem?url=${encodeURIComponent(url)}`, { token });
    expect(search.body.total).toBe(0);
    await t.generations.sweepNow();
    const [left] = await t.db.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM "Concept" c WHERE NOT EXISTS
         (SELECT 1 FROM "ConceptGeneration" g WHERE g.id = c."generationId" AND g.state = 'live')`,
    );
    expect(left.n).toBe(0);
  });

  it('an update keeps the old concepts visible until it commits; the old generation is then removed', async () => {
    const created = await call(s.base, 'POST', 'fhir/R4/CodeSystem', {
      token,
      body: {
        resourceType: 'CodeSystem',
        url: 'http://example.org/generations/replaced',
        status: 'active',
        content: 'complete',
        concept: rows(600, 'old').map(({ code, display }) => ({ code, display })),
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(await generations(id)).toEqual(['live']);
    const updated = await call(s.base, 'PUT', `fhir/R4/CodeSystem/${id}`, {
      token,
      body: { ...created.body, concept: rows(700, 'new').map(({ code, display }) => ({ code, display })) },
    });
    expect(updated.status).toBe(200);
    const read = await call(s.base, 'GET', `fhir/R4/CodeSystem/${id}`, { token });
    expect(read.body.concept).toHaveLength(700);
    expect(read.body.concept[0].code).toBe('new0');
    await s.services.terminology.generations.sweepNow();
    expect(await generations(id)).toEqual(['live']);
    expect(await conceptRows(id)).toBe(700);

    // Deleted: gone at once for readers, its rows with the next sweep.
    expect((await call(s.base, 'DELETE', `fhir/R4/CodeSystem/${id}`, { token })).status).toBe(200);
    expect((await call(s.base, 'GET', `fhir/R4/CodeSystem/${id}`, { token })).status).toBe(404);
    await s.services.terminology.generations.sweepNow();
    expect(await generations(id)).toEqual([]);
    expect(await conceptRows(id)).toBe(0);
  });

  it('a reader paging through a generation gets all of it even when a write replaces it and a sweep runs meanwhile', async () => {
    const t = s.services.terminology;
    const url = 'http://example.org/generations/read-while-replaced';
    const first = await writeTerminologyResource(
      t.db,
      t.generations,
      'CodeSystem',
      { resourceType: 'CodeSystem', url, status: 'active' },
      {
        projectId,
        concepts: rows(3000),
      },
    );
    const [gen] = await t.db.sql<{ id: string }>(
      `SELECT id::text AS id FROM "ConceptGeneration" WHERE "codeSystemId" = $1::uuid AND state = 'live'`,
      [first.id],
    );
    let seen = 0;
    let replaced = false;
    await readConceptPages<{ ordinal: number; code: string }>(
      t.db,
      t.generations,
      gen.id,
      'ordinal, code',
      3000,
      async (page) => {
        seen += page.length;
        if (!replaced) {
          replaced = true;
          await writeTerminologyResource(
            t.db,
            t.generations,
            'CodeSystem',
            { resourceType: 'CodeSystem', url, status: 'active' },
            {
              projectId,
              id: first.id,
              concepts: rows(10, 'x'),
            },
          );
          await t.generations.sweepNow();
        }
      },
      500,
    );
    expect(seen).toBe(3000);
    // Released: the next sweep removes it.
    await t.generations.sweepNow();
    expect(await conceptRows(first.id)).toBe(10);
  });

  it.skipIf(!onPostgres)(
    'PostgreSQL: a generation still being written is kept; one untouched for 10 minutes is removed as abandoned',
    async () => {
      const t = s.services.terminology;
      const codeSystemId = crypto.randomUUID();
      const fresh = await beginGeneration(t.db.sql, codeSystemId, 'writing');
      await insertConceptRows(t.db.sql, fresh, codeSystemId, rows(100), 50);
      await t.generations.sweepNow();
      expect(await generations(codeSystemId)).toEqual(['writing']);
      await t.db.sql(
        `UPDATE "ConceptGeneration" SET "updatedAt" = "updatedAt" - ($2::int * interval '1 millisecond') WHERE id = $1::bigint`,
        [fresh, ABANDONED_AFTER_MS + 1000],
      );
      await t.generations.sweepNow();
      expect(await generations(codeSystemId)).toEqual([]);
      expect(await conceptRows(codeSystemId)).toBe(0);
    },
  );
});

describe.skipIf(onPostgres)('a server killed in the middle of a big write (embedded database)', () => {
  const disk = useTestDatabase({ onDisk: true });
  it('starts again with nothing of the write visible, and its rows removed', async () => {
    let proc = await disk.startProcess({ timeoutMs: 110_000 });
    const t = (await signIn(proc.base)).access_token;
    const syncs = async (base: string): Promise<number> =>
      ((await fetch(`${base}healthz`).then((r) => r.json())) as { fsync: { calls: number } }).fsync.calls;
    const before = await syncs(proc.base);
    const concept = Array.from({ length: 40_000 }, (_, i) => ({ code: `k${i}`, display: `Killed ${i}` }));
    const posting = fetch(`${proc.base}fhir/R4/CodeSystem`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t}`, 'content-type': 'application/fhir+json' },
      body: JSON.stringify({
        resourceType: 'CodeSystem',
        url: 'http://example.org/killed',
        status: 'active',
        concept,
      }),
    }).catch(() => 'aborted');
    // Each batch of concepts is committed on its own (and synced): once 20 have been, kill -9.
    for (let i = 0; i < 600 && (await syncs(proc.base)) < before + 20; i++)
      await new Promise((r) => setTimeout(r, 50));
    proc.child.kill('SIGKILL');
    expect(await posting).toBe('aborted');
    // stop() waits on the exit promise taken at spawn: the process may already be gone by now, and a listener
    // added after its 'exit' would wait for ever (it did, in CI).
    await proc.stop();

    proc = await disk.startProcess({ timeoutMs: 110_000 });
    const t2 = (await signIn(proc.base)).access_token;
    const search = await call(proc.base, 'GET', 'fhir/R4/CodeSystem?url=http://example.org/killed', {
      token: t2,
    });
    expect(search.body.total).toBe(0);
    // The start-up sweep removes the rows in small committed steps: wait until the syncs stop, then look at the
    // database itself.
    let last = -1;
    for (let i = 0; i < 60; i++) {
      const now = await syncs(proc.base);
      if (now === last) break;
      last = now;
      await new Promise((r) => setTimeout(r, 1500));
    }
    await proc.stop();
    const db = await openDatabase({ dataDir: disk.dataDir });
    try {
      const [n] = await db.sql<{ n: number }>('SELECT count(*)::int AS n FROM "Concept"');
      const [g] = await db.sql<{ n: number }>('SELECT count(*)::int AS n FROM "ConceptGeneration"');
      expect(n.n).toBe(0);
      expect(g.n).toBe(0);
    } finally {
      await db.close();
    }
  }, 240_000);
});
