// Attacks on $expand: a catastrophic regex in a compose filter (the HL7 regex-bad case), a huge filter of
// repeated words over long displays, and a `count` far past EXPAND_MAX_UNPAGED. Each ran for minutes, or
// returned everything, on the code before the limits.
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/server.js';
import { expectContained, underAttack, useAttackTarget } from './harness.js';

// RESOURCE_MAX_CHARS raised: the 400,000-entry value sets below would meet it before VALUESET_MAX_ENTRIES, which
// is what they are about (test/attacks/stored-documents.test.ts has the other).
const target = useAttackTarget(
  { EXPAND_MAX_UNPAGED: '100', RESOURCE_MAX_CHARS: '200000000', RESOURCE_MAX_ELEMENTS: '100000000' },
  { signIn: true },
);

const REGEX_BAD = 'http://hl7.org/fhir/test/CodeSystem/regex-bad';
const LONG = 'http://example.org/attack/long-displays';
const WIDE = 'http://example.org/attack/wide';
const SCT = 'http://snomed.info/sct';

async function post(type: string, body: unknown): Promise<void> {
  const r = await call(target.base, 'POST', `fhir/R4/${type}`, { token: target.token, body });
  if (r.status !== 201) throw new Error(`create ${type}: ${r.status} ${r.text}`);
}

/** A Parameters body. Big ones are built before `underAttack` starts: stringifying megabytes in this process
 * would hold its own event loop, and so its /healthz polls, and count as the server's stall. */
const parametersJson = (parameter: unknown[]): string =>
  JSON.stringify({ resourceType: 'Parameters', parameter });

/** The attack was answered 422 too-costly, quickly and without a stall, naming the setting that bounds it. */
function expectTooCostly(o: Awaited<ReturnType<typeof underAttack>>, setting: string): void {
  expectContained(o, { status: 422 });
  const issue = JSON.parse(o.body).issue[0];
  expect(issue.code).toBe('too-costly');
  expect(issue.details.text).toContain(setting);
}

/** POST ValueSet/$expand with Parameters, or a body already built (an abortable fetch, for the harness). */
function expandPost(parameter: unknown[] | string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${target.base}fhir/R4/ValueSet/$expand`, {
    method: 'POST',
    signal,
    headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/fhir+json' },
    body: typeof parameter === 'string' ? parameter : parametersJson(parameter),
  });
}

const inlineRegex = (system: string, pattern: string) => ({
  name: 'valueSet',
  resource: {
    resourceType: 'ValueSet',
    compose: { include: [{ system, filter: [{ property: 'code', op: 'regex', value: pattern }] }] },
  },
});

beforeAll(async () => {
  // The HL7 tx-ecosystem regex-bad code system: 56 'a', then the same followed by Y and Z.
  const a56 = 'a'.repeat(56);
  await post('CodeSystem', {
    resourceType: 'CodeSystem',
    url: REGEX_BAD,
    version: '0.1.0',
    status: 'active',
    content: 'complete',
    caseSensitive: true,
    concept: [
      { code: a56, display: 'Bad Code 1' },
      { code: `${a56}Y`, display: 'Bad Code 2' },
      { code: `${a56}Z`, display: 'Bad Code 3' },
    ],
  });
  // 40 concepts whose displays are 5,000 words each.
  const words = Array.from({ length: 5000 }, (_, i) => `word${i % 500}`).join(' ');
  await post('CodeSystem', {
    resourceType: 'CodeSystem',
    url: LONG,
    status: 'active',
    content: 'complete',
    concept: Array.from({ length: 40 }, (_, i) => ({ code: `c${i}`, display: `${words} end${i}` })),
  });
  await post('CodeSystem', {
    resourceType: 'CodeSystem',
    url: WIDE,
    status: 'active',
    content: 'complete',
    concept: Array.from({ length: 500 }, (_, i) => ({ code: `w${i}`, display: `Wide ${i}` })),
  });
  await post('CodeSystem', {
    resourceType: 'CodeSystem',
    url: SCT,
    version: 'http://snomed.info/sct/900000000000207008/version/20250101',
    status: 'active',
    content: 'complete',
    concept: [{ code: '138875005', display: 'SNOMED CT Concept' }],
  });
}, 60_000);

describe('regex compose filter', () => {
  it('(a+)+ against 56 a then Y answers at once with the one matching code, the server never stalls', async () => {
    const o = await underAttack(target, (signal) => expandPost([inlineRegex(REGEX_BAD, '(a+)+')], signal));
    expectContained(o, { status: 200 });
    const body = JSON.parse(o.body);
    expect(body.expansion.total).toBe(1);
    expect(body.expansion.contains[0].code).toBe('a'.repeat(56));
  }, 30_000);

  it('((a+)+)+ (regex-bad-2) also answers at once', async () => {
    const o = await underAttack(target, (signal) => expandPost([inlineRegex(REGEX_BAD, '((a+)+)+')], signal));
    expectContained(o, { status: 200 });
    expect(JSON.parse(o.body).expansion.total).toBe(1);
  }, 30_000);

  it('a pattern RE2 cannot run in linear time (a backreference) is a 400 that says so', async () => {
    const r = await expandPost([inlineRegex(REGEX_BAD, '(a)\\1*')]);
    expect(r.status).toBe(400);
    const oo = await r.json();
    expect(oo.resourceType).toBe('OperationOutcome');
    expect(oo.issue[0].code).toBe('invalid');
    expect(oo.issue[0].details.text).toMatch(/RE2 syntax/);
    expect(oo.issue[0].expression).toEqual(['ValueSet.compose.include[0].filter[0]']);
  });

  it('a pattern longer than EXPAND_REGEX_MAX_LENGTH is a 400 naming the limit', async () => {
    const r = await expandPost([inlineRegex(REGEX_BAD, 'a'.repeat(1001))]);
    expect(r.status).toBe(400);
    const oo = await r.json();
    expect(oo.issue[0].details.text).toMatch(
      /1001 characters long, more than the limit of 1000 \(EXPAND_REGEX_MAX_LENGTH\)/,
    );
  });
});

describe('ECL compose filter (SNOMED CT constraint)', () => {
  const ecl = (value: string) => ({
    name: 'valueSet',
    resource: {
      resourceType: 'ValueSet',
      compose: { include: [{ system: SCT, filter: [{ property: 'constraint', op: '=', value }] }] },
    },
  });

  it('a 10,000-deep nesting bomb is a 400 at once, without a stack overflow', async () => {
    const body = parametersJson([ecl('('.repeat(10_000) + '138875005' + ')'.repeat(10_000))]);
    const o = await underAttack(target, (signal) => expandPost(body, signal));
    expectContained(o, { status: 400 });
    expect(JSON.parse(o.body).issue[0].details.text).toMatch(/nested too deeply: more than 50 levels/);
  }, 30_000);

  it('a 1 MB expression is a 400 at once, before it is read', async () => {
    const body = parametersJson([ecl('< 138875005 OR '.repeat(70_000) + '138875005')]);
    const o = await underAttack(target, (signal) => expandPost(body, signal));
    expectContained(o, { status: 400 });
    expect(JSON.parse(o.body).issue[0].details.text).toMatch(/ECL expression too long: \d+ characters/);
  }, 30_000);
});

describe('$expand filter', () => {
  it('a 3.5 MB filter of repeated words over long displays is refused at once, naming the limit', async () => {
    // 'end' is rare (one concept each) and last in every display; word499 is the 500th word: each repeat of it
    // scanned 500 display words of every candidate.
    const filter = 'word499 end '.repeat(300_000);
    const o = await underAttack(target, (signal) =>
      expandPost(
        [
          {
            name: 'valueSet',
            resource: { resourceType: 'ValueSet', compose: { include: [{ system: LONG }] } },
          },
          { name: 'filter', valueString: filter },
        ],
        signal,
      ),
    );
    expectContained(o, { status: 400 });
    expect(o.body).toMatch(/EXPAND_FILTER_MAX_CHARS/);
  }, 30_000);

  it('the worst filter within the limits (20 distinct words, repeated to 1,000 characters) stays fast', async () => {
    const distinct = Array.from({ length: 20 }, (_, i) => `word${i}`);
    let filter = '';
    while (filter.length + 8 < 1000) filter += distinct[((filter.length / 7) % 20) | 0] + ' ';
    const o = await underAttack(target, (signal) =>
      expandPost(
        [
          {
            name: 'valueSet',
            resource: { resourceType: 'ValueSet', compose: { include: [{ system: LONG }] } },
          },
          { name: 'filter', valueString: filter.trim() },
          { name: 'count', valueInteger: 0 },
        ],
        signal,
      ),
    );
    expectContained(o, { status: 200 });
    expect(JSON.parse(o.body).expansion.total).toBe(40);
    expect(o.ms).toBeLessThan(1_000);
  }, 30_000);

  it('a filter of more than EXPAND_FILTER_MAX_WORDS distinct words is a 400 naming the limit', async () => {
    const filter = Array.from({ length: 21 }, (_, i) => `w${i}`).join(' ');
    const r = await expandPost([
      { name: 'valueSet', resource: { resourceType: 'ValueSet', compose: { include: [{ system: WIDE }] } } },
      { name: 'filter', valueString: filter },
    ]);
    expect(r.status).toBe(400);
    expect((await r.json()).issue[0].details.text).toMatch(/21 distinct words, more than the limit of 20/);
  });
});

describe('$expand count', () => {
  it('count=999999999 does not bypass EXPAND_MAX_UNPAGED: 400 naming EXPAND_MAX_COUNT', async () => {
    const r = await call(target.base, 'POST', 'fhir/R4/ValueSet/$expand', {
      token: target.token,
      body: {
        resourceType: 'Parameters',
        parameter: [
          {
            name: 'valueSet',
            resource: { resourceType: 'ValueSet', compose: { include: [{ system: WIDE }] } },
          },
          { name: 'count', valueInteger: 999_999_999 },
        ],
      },
    });
    expect(r.status).toBe(400);
    expect(r.body.issue[0].details.text).toMatch(
      /count is 999999999, more than the limit of 10000 \(EXPAND_MAX_COUNT\)/,
    );
    expect(r.body.issue[0].expression).toEqual(['count']);
  });

  it('through GraphQL too', async () => {
    const r = await call(target.base, 'POST', 'graphql', {
      token: target.token,
      headers: { 'content-type': 'application/json' },
      body: {
        query: 'query ($vs: JSON) { expandValueSet(valueSet: $vs, count: 100000) }',
        variables: { vs: { resourceType: 'ValueSet', compose: { include: [{ system: WIDE }] } } },
      },
    });
    expect(r.text).toMatch(/EXPAND_MAX_COUNT/);
    expect(r.body.data?.expandValueSet ?? null).toBeNull();
  });
});

describe('$expand tx-resource', () => {
  const csOf = (url: string, n: number) => ({
    resourceType: 'CodeSystem',
    url,
    status: 'active',
    content: 'complete',
    concept: Array.from({ length: n }, (_, i) => ({
      code: `c${i}`,
      display: `Display number ${i} of a code`,
    })),
  });
  const vsOf = (url: string) => ({
    name: 'valueSet',
    resource: { resourceType: 'ValueSet', compose: { include: [{ system: url }] } },
  });

  it('a 300,000-concept CodeSystem sent with the request is a 422 naming TX_RESOURCE_MAX_CONCEPTS, without a stall', async () => {
    // Before: indexed in memory on the event loop at every request (about 0.9 s here for 300,000 concepts; a
    // 50 MB body holds over 600,000).
    const url = 'http://example.org/attack/tx-big';
    const body = parametersJson([
      vsOf(url),
      { name: 'count', valueInteger: 5 },
      { name: 'tx-resource', resource: csOf(url, 300_000) },
    ]);
    const o = await underAttack(target, (signal) => expandPost(body, signal));
    expectTooCostly(o, 'TX_RESOURCE_MAX_CONCEPTS');
  });

  it('many smaller ones count together; within the limit they expand', async () => {
    const parts = Array.from({ length: 3 }, (_, i) => ({
      name: 'tx-resource',
      resource: csOf(`http://example.org/attack/tx-${i}`, 8_000),
    }));
    const over = await expandPost([vsOf('http://example.org/attack/tx-0'), ...parts]);
    expect(over.status).toBe(422);
    const ok = await expandPost([
      vsOf('http://example.org/attack/tx-0'),
      { name: 'count', valueInteger: 2 },
      ...parts.slice(0, 2),
    ]);
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as { expansion: { total: number; contains: { code: string }[] } };
    expect(body.expansion.total).toBe(8_000);
    expect(body.expansion.contains.map((c) => c.code)).toEqual(['c0', 'c1']);
  });
});

describe('$expand compose size', () => {
  const url = 'http://example.org/attack/clauses';
  const cs = {
    resourceType: 'CodeSystem',
    url,
    status: 'active',
    content: 'complete',
    concept: Array.from({ length: 2000 }, (_, i) => ({ code: `c${i}`, display: `Display ${i}` })),
  };
  const isA = (n: number) => ({
    name: 'valueSet',
    resource: {
      resourceType: 'ValueSet',
      compose: {
        include: Array.from({ length: n }, (_, i) => ({
          system: url,
          filter: [{ property: 'concept', op: 'is-a', value: `c${i % 2000}` }],
        })),
      },
    },
  });

  it('50,000 is-a includes are a 422 naming EXPAND_MAX_COMPOSE_CLAUSES, without a stall', async () => {
    // Before: each include evaluated in turn on the event loop, 3.4 s for 50,000 here (the answer a 200).
    const body = parametersJson([
      isA(50_000),
      { name: 'count', valueInteger: 5 },
      { name: 'tx-resource', resource: cs },
    ]);
    const o = await underAttack(target, (signal) => expandPost(body, signal));
    expectTooCostly(o, 'EXPAND_MAX_COMPOSE_CLAUSES');
  });

  it('within the limit (400 includes of one filter each: 800 clauses) the value set expands', async () => {
    const r = await expandPost([
      isA(400),
      { name: 'count', valueInteger: 3 },
      { name: 'tx-resource', resource: cs },
    ]);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { expansion: { total: number } };
    expect(body.expansion.total).toBe(400);
  });
});

describe('ValueSets that enumerate too much', () => {
  const bigExpansion = (n: number, url?: string) => ({
    resourceType: 'ValueSet',
    ...(url ? { url, status: 'active' } : {}),
    expansion: {
      timestamp: '2020-01-01',
      contains: Array.from({ length: n }, (_, i) => ({
        system: 'http://x',
        code: `c${i}`,
        display: `D ${i}`,
      })),
    },
  });

  it('a stored ValueSet of 400,000 expansion entries is a 422 naming VALUESET_MAX_ENTRIES, without a stall', async () => {
    // Before: stored (201, worst /healthz 619 ms), and each $expand of it held the event loop 1.7 s.
    const body = JSON.stringify(bigExpansion(400_000, 'http://example.org/attack/big-expansion'));
    const o = await underAttack(target, (signal) =>
      fetch(`${target.base}fhir/R4/ValueSet`, {
        method: 'POST',
        signal,
        headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/fhir+json' },
        body,
      }),
    );
    expectTooCostly(o, 'VALUESET_MAX_ENTRIES');
    const search = await call(
      target.base,
      'GET',
      'fhir/R4/ValueSet?url=http://example.org/attack/big-expansion',
      {
        token: target.token,
      },
    );
    expect(search.body.total).toBe(0);
  });

  it('an inline valueSet of 400,000 entries (or 400,000 enumerated codes) is a 422 too', async () => {
    // Before: 200 after holding the event loop about a second.
    const body = parametersJson([
      { name: 'valueSet', resource: bigExpansion(400_000) },
      { name: 'count', valueInteger: 5 },
    ]);
    const o = await underAttack(target, (signal) => expandPost(body, signal));
    expectTooCostly(o, 'VALUESET_MAX_ENTRIES');
    const enumerated = await expandPost([
      {
        name: 'valueSet',
        resource: {
          resourceType: 'ValueSet',
          compose: {
            include: [
              { system: 'http://x', concept: Array.from({ length: 400_000 }, (_, i) => ({ code: `c${i}` })) },
            ],
          },
        },
      },
    ]);
    expect(enumerated.status).toBe(422);
  });

  it('40,000 entries are within the limit', async () => {
    const r = await call(target.base, 'POST', 'fhir/R4/ValueSet', {
      token: target.token,
      body: bigExpansion(40_000, 'http://example.org/attack/fine-expansion'),
    });
    expect(r.status).toBe(201);
  });
});
