// Code system index files (DATA_DIR/terminology-index): written after an index is built, read back after a
// restart (same expansion, no rebuild), ignored once the CodeSystem changes.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database.js';
import { call, signIn, type TestServer } from '../helpers/server.js';

const URL_CS = 'http://example.org/cs/index-file';
const URL_VS = 'http://example.org/vs/index-file';
const WORDS = [
  'heart',
  'acute',
  'chronic',
  'lung',
  'left',
  'right',
  'fracture',
  'renal',
  'hepatic',
  'cardiac',
];

function codeSystem(n: number, suffix: string): unknown {
  const concept = Array.from({ length: n }, (_, i) => ({
    code: `K${i}`,
    display: `${WORDS[i % 10]} ${WORDS[(i * 7 + 3) % 10]} ${WORDS[(i * 3 + 1) % 10]} ${suffix}${i % 13}`,
  }));
  return { resourceType: 'CodeSystem', url: URL_CS, status: 'active', content: 'complete', concept };
}

const db = useTestDatabase({ onDisk: true });

type Reply = Awaited<ReturnType<typeof call>>;

async function expand(s: TestServer, token: string, filter: string): Promise<Reply> {
  return call(
    s.base,
    'GET',
    `fhir/R4/ValueSet/$expand?url=${encodeURIComponent(URL_VS)}&filter=${encodeURIComponent(filter)}&count=5`,
    { token },
  );
}

describe('code system index files', () => {
  it('are written after a build, read back after a restart, and ignored once the CodeSystem changes', async () => {
    const dir = path.join(db.dataDir, 'terminology-index');
    let s = await db.start();
    let token = (await signIn(s.base)).access_token;
    let before: Reply | undefined;
    let csId = '';
    try {
      const cs = await call(s.base, 'POST', 'fhir/R4/CodeSystem', { token, body: codeSystem(12_000, 'x') });
      expect(cs.status).toBe(201);
      csId = cs.body.id;
      const vs = await call(s.base, 'POST', 'fhir/R4/ValueSet', {
        token,
        body: {
          resourceType: 'ValueSet',
          url: URL_VS,
          status: 'active',
          compose: { include: [{ system: URL_CS }] },
        },
      });
      expect(vs.status).toBe(201);
      before = await expand(s, token, 'heart acu');
      expect(before.status).toBe(200);
      expect(before.body.expansion.total).toBeGreaterThan(0);
      // Written in the background after the build.
      const file = path.join(dir, `${csId}.csix`);
      for (let i = 0; i < 100 && !fs.existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
      expect(fs.existsSync(file)).toBe(true);
    } finally {
      await s.close();
    }

    // A restart: the file is read back (its modification time does not move: nothing rebuilt and rewritten).
    const file = path.join(dir, `${csId}.csix`);
    const mtime = fs.statSync(file).mtimeMs;
    s = await db.start();
    token = (await signIn(s.base)).access_token;
    const after = await expand(s, token, 'heart acu');
    expect(after.status).toBe(200);
    expect(after.body.expansion.total).toBe(before!.body.expansion.total);
    expect(after.body.expansion.contains).toEqual(before!.body.expansion.contains);
    await new Promise((r) => setTimeout(r, 500));
    expect(fs.statSync(file).mtimeMs).toBe(mtime);

    // An update makes the file stale: the next expansion shows the new displays, and the file is rewritten.
    const put = await call(s.base, 'PUT', `fhir/R4/CodeSystem/${csId}`, {
      token,
      body: { ...(codeSystem(12_000, 'y') as object), id: csId },
    });
    expect(put.status).toBe(200);
    const changed = await expand(s, token, 'heart y1');
    expect(changed.status).toBe(200);
    expect(changed.body.expansion.total).toBeGreaterThan(0);
    expect((await expand(s, token, 'heart x1')).body.expansion.total).toBe(0);
    for (let i = 0; i < 100 && fs.statSync(file).mtimeMs === mtime; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(fs.statSync(file).mtimeMs).not.toBe(mtime);
  }, 180_000);
});
