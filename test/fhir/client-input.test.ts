// Client mistakes that used to answer 500 (issue 23, 4): a lone surrogate in any string of a stored resource
// (jsonb refuses it), a concept code longer than an index row allows, and inline $expand value sets whose compose
// has the wrong shapes. Each answers 400 with an OperationOutcome naming the element, and nothing is written.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, useTestServer } from '../helpers/server.js';

const server = useTestServer({ signIn: true });

/** A JSON body with `\ud800` (a lone surrogate, as JSON escapes allow) where `LONE` appears in `value`. */
function withLoneSurrogate(value: unknown): string {
  return JSON.stringify(value).replaceAll('LONE', '\\ud800');
}

async function post(type: string, body: string | object) {
  return call(server.base, 'POST', `fhir/R4/${type}`, {
    token: server.token,
    ...(typeof body === 'string' ? { raw: body } : { body }),
    headers: { 'content-type': 'application/fhir+json' },
  });
}

/** `n` characters that do not compress (a repeated letter would fit an index row once compressed). */
const noise = (n: number): string => crypto.randomBytes(n).toString('base64url').slice(0, n);

/** The answer is a 400 OperationOutcome whose first issue names `expression`. */
function expectOutcome(r: Awaited<ReturnType<typeof call>>, expression: RegExp) {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body.resourceType).toBe('OperationOutcome');
  const issue = r.body.issue[0];
  expect(issue.severity).toBe('error');
  expect(JSON.stringify(issue.expression ?? []), JSON.stringify(issue)).toMatch(expression);
}

/** Nothing of a refused write was stored: a search by its url finds nothing. */
async function expectNothingWritten(type: string, url: string) {
  const r = await call(server.base, 'GET', `fhir/R4/${type}?url=${encodeURIComponent(url)}`, {
    token: server.token,
  });
  expect(r.status).toBe(200);
  expect(r.body.total).toBe(0);
}

describe('strings that are not well-formed Unicode', () => {
  it('CodeSystem: 400 naming the concept display', async () => {
    const r = await post(
      'CodeSystem',
      withLoneSurrogate({
        resourceType: 'CodeSystem',
        url: 'http://example.org/lone/cs',
        status: 'active',
        content: 'complete',
        concept: [{ code: 'a', display: 'bad LONE display' }],
      }),
    );
    expectOutcome(r, /concept\[0\]\.display/);
    await expectNothingWritten('CodeSystem', 'http://example.org/lone/cs');
  });

  it('ValueSet: 400 naming the title', async () => {
    const r = await post(
      'ValueSet',
      withLoneSurrogate({
        resourceType: 'ValueSet',
        url: 'http://example.org/lone/vs',
        status: 'active',
        title: 'LONE',
      }),
    );
    expectOutcome(r, /title/);
  });

  it('Bot: 400 naming the code', async () => {
    const r = await post('Bot', withLoneSurrogate({ resourceType: 'Bot', name: 'b', code: '// LONE' }));
    expectOutcome(r, /code/);
  });
});

describe('values past what the database can index', () => {
  it('a concept code of 3,000 characters: 400 naming it', async () => {
    const r = await post('CodeSystem', {
      resourceType: 'CodeSystem',
      url: 'http://example.org/long-code/cs',
      status: 'active',
      content: 'complete',
      concept: [{ code: 'ok' }, { code: noise(3000) }],
    });
    expectOutcome(r, /concept\[1\]\.code/);
    await expectNothingWritten('CodeSystem', 'http://example.org/long-code/cs');
  });

  it('a url of 5,000 characters: 400 naming it', async () => {
    const r = await post('ValueSet', {
      resourceType: 'ValueSet',
      url: `http://example.org/${noise(5000)}`,
      status: 'active',
    });
    expectOutcome(r, /url/);
  });

  it('an identifier value of 5,000 characters: 400 naming it', async () => {
    const r = await post('CodeSystem', {
      resourceType: 'CodeSystem',
      url: 'http://example.org/long-identifier/cs',
      identifier: [{ system: 'urn:x', value: noise(5000) }],
      status: 'active',
      content: 'complete',
    });
    expectOutcome(r, /identifier\[0\]\.value/);
  });
});

describe('inline $expand with a compose of the wrong shape', () => {
  const expand = (compose: unknown) =>
    call(server.base, 'POST', 'fhir/R4/ValueSet/$expand', {
      token: server.token,
      body: {
        resourceType: 'Parameters',
        parameter: [{ name: 'valueSet', resource: { resourceType: 'ValueSet', status: 'active', compose } }],
      },
    });

  it('include.valueSet: [5]', async () => {
    expectOutcome(await expand({ include: [{ valueSet: [5] }] }), /compose\.include\[0\]\.valueSet\[0\]/);
  });

  it('include.concept: [null]', async () => {
    expectOutcome(
      await expand({ include: [{ system: 'http://x', concept: [null] }] }),
      /compose\.include\[0\]\.concept\[0\]/,
    );
  });

  it('exclude: "x"', async () => {
    expectOutcome(await expand({ include: [{ system: 'http://x' }], exclude: 'x' }), /compose\.exclude/);
  });
});

describe('through GraphQL', () => {
  it('createResource with a lone surrogate in its variables: an error naming the element, nothing written', async () => {
    const query = 'mutation ($r: JSON!) { createResource(resourceType: "ValueSet", resource: $r) }';
    const variables = {
      r: { resourceType: 'ValueSet', url: 'http://example.org/lone/gql', status: 'active', title: 'LONE' },
    };
    const res = await fetch(`${server.base}graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: withLoneSurrogate({ query, variables }),
    });
    const body = await res.json();
    expect(res.status).toBeLessThan(500);
    expect(body.errors?.[0]?.message).toMatch(/ValueSet\.title is not well-formed Unicode/);
    await expectNothingWritten('ValueSet', 'http://example.org/lone/gql');
  });
});

describe("resources that do not match FHIR R4's definition of their type", () => {
  const cs = (extra: object) => ({
    resourceType: 'CodeSystem',
    url: 'http://example.org/shape/cs',
    status: 'active',
    content: 'complete',
    ...extra,
  });

  it('a concept display given as an array: 400 naming it, nothing written', async () => {
    const r = await post('CodeSystem', cs({ concept: [{ code: 'a', display: ['x', 7] }] }));
    expectOutcome(r, /CodeSystem\.concept\[0\]\.display/);
    expect(r.body.issue[0].details.text).toMatch(/must be string/);
    await expectNothingWritten('CodeSystem', 'http://example.org/shape/cs');
  });

  it('null in an array of elements (a nested concept property): 400 naming it', async () => {
    const r = await post(
      'CodeSystem',
      cs({ concept: [{ code: 'a', concept: [{ code: 'b', property: [null] }] }] }),
    );
    expectOutcome(r, /CodeSystem\.concept\[0\]\.concept\[0\]\.property\[0\]/);
  });

  it('an element R4 does not define: 400 naming it', async () => {
    const r = await post('CodeSystem', cs({ concept: [{ code: 'a', colour: 'red' }] }));
    expectOutcome(r, /CodeSystem\.concept\[0\]\.colour/);
    expect(r.body.issue[0].details.text).toMatch(/not an element of FHIR R4's CodeSystem/);
  });

  it('a status outside its value set and a version given as a number: 400 naming each', async () => {
    expectOutcome(await post('CodeSystem', cs({ status: 'bogus' })), /CodeSystem\.status/);
    expectOutcome(await post('CodeSystem', cs({ version: 5 })), /CodeSystem\.version/);
  });

  it('a ValueSet url that is not a uri, and a Bot element Medplum does not define: 400 naming each', async () => {
    const vs = await post('ValueSet', {
      resourceType: 'ValueSet',
      url: 'has spaces in it',
      status: 'active',
    });
    expectOutcome(vs, /ValueSet\.url/);
    const bot = await post('Bot', { resourceType: 'Bot', name: 'b', code: '//', runAs: 'root' });
    expectOutcome(bot, /Bot\.runAs/);
  });

  it('the concepts of a big CodeSystem are all checked: a bad one deep in the list is named', async () => {
    const concept = Array.from({ length: 3000 }, (_, i) => ({ code: `c${i}`, display: `C ${i}` }));
    concept[2500] = { code: 'c2500', display: { text: 'no' } } as unknown as (typeof concept)[number];
    const r = await post('CodeSystem', cs({ concept }));
    expectOutcome(r, /CodeSystem\.concept\[2500\]\.display/);
  });
});
