// A stored document too big to read (issue 23, reproduction 2): a member wrote a ValueSet of 1.45 M
// compose.include entries (48 MB) and got 201; every GET of it then held the event loop 1.6-1.9 s, and two clients
// reading it in a loop made another project's /auth/me take seconds. A written resource (without a CodeSystem's
// concepts, which are rows of their own) is now bounded by RESOURCE_MAX_CHARS and RESOURCE_MAX_ELEMENTS, and a
// ValueSet's compose by EXPAND_MAX_COMPOSE_CLAUSES on write (it could never be expanded): 422 naming the limit,
// nothing stored.
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/server.js';
import { expectContained, underAttack, useAttackTarget } from './harness.js';

// RESOURCE_MAX_CHARS raised from its 1 Mi default to 4 Mi: the elements limit and the reads of big resources are
// what some of these tests are about.
const target = useAttackTarget({ RESOURCE_MAX_CHARS: String(4 * 1024 * 1024) }, { signIn: true });
const URL = 'http://example.org/attack/wide-compose';

/** POSTs a ValueSet's JSON under attack: 422 too-costly naming `setting`, no stall, nothing stored at `url`. */
async function expectRefusedWrite(body: string, url: string, setting: string): Promise<void> {
  const o = await underAttack(target, (signal) =>
    fetch(`${target.base}fhir/R4/ValueSet`, {
      method: 'POST',
      signal,
      headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/fhir+json' },
      body,
    }),
  );
  expectContained(o, { status: 422 });
  const issue = JSON.parse(o.body).issue[0];
  expect(issue.code).toBe('too-costly');
  expect(issue.details.text).toContain(setting);
  const search = await call(target.base, 'GET', `fhir/R4/ValueSet?url=${url}`, { token: target.token });
  expect(search.body.total).toBe(0);
}

describe('a stored document too big to read', () => {
  it('a ValueSet of 300,000 compose.include entries (10 MB): 422 naming EXPAND_MAX_COMPOSE_CLAUSES, nothing stored', async () => {
    // Counted from the array's length before anything walks the body (it is also over RESOURCE_MAX_CHARS).
    const include = Array.from({ length: 300_000 }, (_, i) => `{"system":"http://example.org/cs/${i}"}`);
    const body = `{"resourceType":"ValueSet","url":"${URL}","status":"active","compose":{"include":[${include.join(',')}]}}`;
    await expectRefusedWrite(body, URL, 'EXPAND_MAX_COMPOSE_CLAUSES');
  });

  it('a ValueSet of 5,000 contacts of 1,000-character names (5 MB): 422 naming RESOURCE_MAX_CHARS, nothing stored', async () => {
    const contact = Array.from({ length: 5_000 }, (_, i) => `{"name":"${String(i).padEnd(1000, 'x')}"}`);
    const body = `{"resourceType":"ValueSet","url":"${URL}","status":"active","contact":[${contact.join(',')}]}`;
    await expectRefusedWrite(body, URL, 'RESOURCE_MAX_CHARS');
  });

  it('a ValueSet of 130,000 extensions (3.6 MB, under RESOURCE_MAX_CHARS): 422 naming RESOURCE_MAX_ELEMENTS', async () => {
    const url = 'http://example.org/attack/many-elements';
    const extension = Array.from({ length: 130_000 }, () => '{"url":"u","valueCode":"c"}');
    const body = `{"resourceType":"ValueSet","url":"${url}","status":"active","extension":[${extension.join(',')}]}`;
    expect(body.length).toBeLessThan(4 * 1024 * 1024);
    await expectRefusedWrite(body, url, 'RESOURCE_MAX_ELEMENTS');
  });

  it('a ValueSet of more compose clauses than one expansion may evaluate: 422 naming EXPAND_MAX_COMPOSE_CLAUSES', async () => {
    const url = 'http://example.org/attack/many-clauses';
    const valueSet = (n: number) => ({
      resourceType: 'ValueSet',
      url,
      status: 'active',
      compose: { include: Array.from({ length: n }, (_, i) => ({ system: `http://example.org/cs/${i}` })) },
    });
    const over = await call(target.base, 'POST', 'fhir/R4/ValueSet', {
      token: target.token,
      body: valueSet(1001),
    });
    expect(over.status, over.text.slice(0, 300)).toBe(422);
    expect(over.body.issue[0].code).toBe('too-costly');
    expect(over.body.issue[0].details.text).toContain('EXPAND_MAX_COMPOSE_CLAUSES');
    expect(over.body.issue[0].expression).toEqual(['ValueSet.compose']);
    const search = await call(target.base, 'GET', `fhir/R4/ValueSet?url=${url}`, { token: target.token });
    expect(search.body.total).toBe(0);
    const within = await call(target.base, 'POST', 'fhir/R4/ValueSet', {
      token: target.token,
      body: valueSet(1000),
    });
    expect(within.status, within.text.slice(0, 300)).toBe(201);
  });

  it('a 3.8 MB ValueSet is read by several clients at once without a stall (in steps, large-request places)', async () => {
    const url = 'http://example.org/attack/largest-allowed';
    const contains = Array.from({ length: 33_000 }, (_, i) => ({
      system: 'http://example.org/cs',
      code: `code-${i}`,
      display: `A display of forty or so characters, number ${i}`,
    }));
    const body = {
      resourceType: 'ValueSet',
      url,
      status: 'active',
      expansion: { timestamp: '2026-01-01', contains },
    };
    expect(JSON.stringify(body).length).toBeGreaterThan(3.6 * 1024 * 1024);
    const created = await call(target.base, 'POST', 'fhir/R4/ValueSet', { token: target.token, body });
    expect(created.status, created.text.slice(0, 300)).toBe(201);
    const id = created.body.id as string;
    const o = await underAttack(target, async (signal) => {
      const reads = await Promise.all(
        [0, 1, 2, 3].map(async () => {
          const r = await fetch(`${target.base}fhir/R4/ValueSet/${id}`, {
            signal,
            headers: { authorization: `Bearer ${target.token}` },
          });
          return { status: r.status, length: (await r.arrayBuffer()).byteLength };
        }),
      );
      // Each read streams the whole resource, or is told to wait (429) while its project holds its share of large
      // requests (LARGE_REQUESTS_PER_PROJECT).
      const whole = reads.filter((r) => r.status === 200 && r.length > 3.6 * 1024 * 1024);
      const waiting = reads.filter((r) => r.status === 429);
      const ok = whole.length >= 1 && whole.length + waiting.length === reads.length;
      return { status: ok ? 200 : 500, body: JSON.stringify(reads) };
    });
    expectContained(o, { status: 200 });
    // Streamed in pieces, the resource reads back whole and the same.
    const back = await call(target.base, 'GET', `fhir/R4/ValueSet/${id}`, { token: target.token });
    expect(back.status).toBe(200);
    expect(back.body.expansion.contains).toEqual(contains);
    expect(back.body).toMatchObject({ resourceType: 'ValueSet', id, url, meta: { versionId: '1' } });
    const search = await call(target.base, 'GET', `fhir/R4/ValueSet?url=${url}`, { token: target.token });
    expect(search.body.entry[0].resource.expansion.contains).toHaveLength(contains.length);
  });

  it('a CodeSystem is measured without its concepts: 30,000 of them are stored', async () => {
    const r = await call(target.base, 'POST', 'fhir/R4/CodeSystem', {
      token: target.token,
      body: {
        resourceType: 'CodeSystem',
        url: 'http://example.org/attack/many-concepts',
        status: 'active',
        content: 'complete',
        concept: Array.from({ length: 30_000 }, (_, i) => ({
          code: `c${i}`,
          display: `Concept ${i} ${'x'.repeat(150)}`,
        })),
      },
    });
    expect(r.status, r.text.slice(0, 300)).toBe(201);
  });
});
