// Identical terminology requests are answered from kept answers (src/terminology/answer-cache.ts) while the
// terminology they read is unchanged: a change is seen by the very next request, and an answer never crosses to
// another project or to a request that differs in a header the answer reads.
import { beforeAll, describe, expect, it } from 'vitest';
import { createProject, type Account } from '../helpers/projects.js';
import { call, useTestServer } from '../helpers/server.js';

const CS = 'http://example.org/answers/colours';
const VS = 'http://example.org/answers/colours-vs';

const s = useTestServer({ signIn: true });
let other: Account;
let csId = '';

const colours = (display: string) => ({
  resourceType: 'CodeSystem',
  url: CS,
  status: 'active',
  content: 'complete',
  concept: [
    { code: 'red', display, designation: [{ language: 'de', value: 'Rot' }] },
    { code: 'blue', display: 'Blue' },
  ],
});
const inlineValueSet = {
  resourceType: 'ValueSet',
  url: VS,
  status: 'active',
  compose: { include: [{ system: CS }] },
};

const validate = (token: string) =>
  call(
    s.base,
    'GET',
    `fhir/R4/CodeSystem/$validate-code?url=${encodeURIComponent(CS)}&code=red&display=Red`,
    { token },
  );
const expandInline = (token: string, headers?: Record<string, string>) =>
  call(s.base, 'POST', 'fhir/R4/ValueSet/$expand', {
    token,
    headers,
    body: { resourceType: 'Parameters', parameter: [{ name: 'valueSet', resource: inlineValueSet }] },
  });
const param = (body: { parameter?: Array<{ name: string; valueBoolean?: boolean }> }, name: string) =>
  body.parameter?.find((p) => p.name === name);
const displayOf = (
  body: { expansion?: { contains?: Array<{ code: string; display?: string }> } },
  code: string,
) => body.expansion?.contains?.find((c) => c.code === code)?.display;

beforeAll(async () => {
  const r = await call(s.base, 'POST', 'fhir/R4/CodeSystem', { token: s.token, body: colours('Red') });
  expect(r.status, r.text).toBe(201);
  csId = r.body.id as string;
  other = await createProject(s.base, s.token, 'Answers elsewhere');
}, 120_000);

describe('kept answers', () => {
  it('an identical request gets the same answer; a change to the code system is seen by the next one', async () => {
    const first = await validate(s.token);
    expect(first.status, first.text).toBe(200);
    expect(param(first.body, 'result')?.valueBoolean).toBe(true);
    const again = await validate(s.token);
    expect(again.text).toBe(first.text);
    const inline = await expandInline(s.token);
    expect(displayOf(inline.body, 'red')).toBe('Red');
    expect((await expandInline(s.token)).text).toBe(inline.text);

    const put = await call(s.base, 'PUT', `fhir/R4/CodeSystem/${csId}`, {
      token: s.token,
      body: { ...colours('Crimson'), id: csId },
    });
    expect(put.status, put.text).toBe(200);
    const after = await validate(s.token);
    expect(after.status, after.text).toBe(200);
    expect(param(after.body, 'result')?.valueBoolean).toBe(false);
    expect(displayOf((await expandInline(s.token)).body, 'red')).toBe('Crimson');
  });

  it("another project's identical request gets its own answer", async () => {
    await validate(s.token);
    const elsewhere = await validate(other.token);
    expect(elsewhere.status).toBe(200);
    // The code system is not that project's: not a valid code there.
    expect(param(elsewhere.body, 'result')?.valueBoolean).toBe(false);
    expect(displayOf((await expandInline(s.token)).body, 'red')).toBeDefined();
    const expanded = await expandInline(other.token);
    expect(displayOf(expanded.body, 'red')).toBeUndefined();
  });

  it('a request that differs only in Accept-Language gets its own answer', async () => {
    const plain = await expandInline(s.token);
    const german = await expandInline(s.token, { 'accept-language': 'de' });
    expect(german.status, german.text).toBe(200);
    expect(displayOf(german.body, 'red')).toBe('Rot');
    expect(displayOf(plain.body, 'red')).not.toBe('Rot');
    expect(displayOf((await expandInline(s.token)).body, 'red')).toBe(displayOf(plain.body, 'red'));
  });
});
