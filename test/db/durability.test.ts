// Durability of the embedded database (issue 11 item 13): PGlite's file system treated fsync as a no-op, so even
// with fsync=on no sync reached the disk (strace counted 0 fsync/fdatasync calls over 300 commits). Now PostgreSQL's
// syncs are real system calls: every committed write syncs the WAL before the client gets its answer, and /healthz
// counts them. On PostgreSQL (DATABASE_URL) the server's own fsync applies and /healthz shows no counter.
import { describe, expect, it } from 'vitest';
import { call, onPostgres, signIn, withTestServer, type TestServer } from '../helpers/server.js';

const fsyncOf = async (s: TestServer) => (await call(s.base, 'GET', 'healthz')).body.fsync;

const codeSystem = (n: number) => ({
  resourceType: 'CodeSystem',
  url: `http://example.org/fsync-${n}`,
  status: 'active',
  content: 'complete',
  concept: [{ code: 'a', display: 'A' }],
});

describe.skipIf(onPostgres)('embedded database durability (fsync)', () => {
  it('each acknowledged write was synced to disk first', async () => {
    await withTestServer({ onDisk: true, config: { pgliteFsync: true } }, async (s) => {
      const token = (await signIn(s.base)).access_token;
      const before = await fsyncOf(s);
      expect(before.enabled).toBe(true);
      // The first start synced its files (initdb, migrations) already.
      expect(before.calls).toBeGreaterThan(0);
      let last = before.calls;
      for (let i = 0; i < 3; i++) {
        const r = await call(s.base, 'POST', 'fhir/R4/CodeSystem', { token, body: codeSystem(i) });
        expect(r.status, r.text).toBe(201);
        // The sync runs inside PostgreSQL's commit, before the statement returns: by the time the client holds
        // the 201, the counter has moved.
        const now = (await fsyncOf(s)).calls;
        expect(now).toBeGreaterThan(last);
        last = now;
      }
    });
  }, 120_000);

  it('PGLITE_FSYNC=false: no syncs, and /healthz says so', async () => {
    await withTestServer({ onDisk: true, config: { pgliteFsync: false } }, async (s) => {
      const token = (await signIn(s.base)).access_token;
      const r = await call(s.base, 'POST', 'fhir/R4/CodeSystem', { token, body: codeSystem(9) });
      expect(r.status, r.text).toBe(201);
      expect(await fsyncOf(s)).toEqual({ enabled: false, calls: 0, totalMs: 0 });
    });
  }, 120_000);
});

describe.runIf(onPostgres)('PostgreSQL durability', () => {
  it('/healthz has no embedded fsync counter (the PostgreSQL server syncs its WAL itself)', async () => {
    await withTestServer({}, async (s) => {
      expect(await fsyncOf(s)).toBeUndefined();
    });
  });
});
