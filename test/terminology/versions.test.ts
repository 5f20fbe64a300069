// Which version a request without one gets (issue 26, "a version bug found on the way"): the highest, compared part
// by part and numerically, for stored ValueSets and CodeSystems as for tx-resource, whatever the order in which the
// versions were written (before: the one written last). The tx ecosystem suite's version-all setup writes 1.2.0
// before 1.0.0.
import { describe, expect, it } from 'vitest';
import { call, useTestServer } from '../helpers/server.js';

const s = useTestServer({ signIn: true });
const CS = 'http://example.org/versions/cs';
const VS = 'http://example.org/versions/vs';

async function post(type: string, body: unknown): Promise<void> {
  const r = await call(s.base, 'POST', `fhir/R4/${type}`, { token: s.token, body });
  expect(r.status, r.text).toBe(201);
}

const codeSystem = (version: string) => ({
  resourceType: 'CodeSystem',
  url: CS,
  version,
  status: 'active',
  content: 'complete',
  concept: [{ code: `v${version}`, display: `Version ${version}` }],
});

const valueSet = (version: string) => ({
  resourceType: 'ValueSet',
  url: VS,
  version,
  status: 'active',
  compose: { include: [{ system: CS, version }] },
});

const expand = async (query: string) => {
  const r = await call(s.base, 'GET', `fhir/R4/ValueSet/$expand?${query}`, { token: s.token });
  expect(r.status, r.text).toBe(200);
  return r.body as { version?: string; expansion: { contains: Array<{ code: string; version?: string }> } };
};

describe('without a version, the highest wins whatever the order of writing', () => {
  it('stored ValueSets and CodeSystems: 1.10.0 over 1.9.0 and 1.2.0, written first', async () => {
    for (const v of ['1.10.0', '1.2.0', '1.9.0']) await post('CodeSystem', codeSystem(v));
    for (const v of ['1.10.0', '1.2.0', '1.9.0']) await post('ValueSet', valueSet(v));

    const latest = await expand(`url=${encodeURIComponent(VS)}`);
    expect(latest.version).toBe('1.10.0');
    expect(latest.expansion.contains.map((c) => c.code)).toEqual(['v1.10.0']);

    // A version asked for is the one given.
    const named = await expand(`url=${encodeURIComponent(VS)}&valueSetVersion=1.2.0`);
    expect(named.version).toBe('1.2.0');
    expect(named.expansion.contains.map((c) => c.code)).toEqual(['v1.2.0']);
  });

  it('an include without a version takes the highest stored CodeSystem', async () => {
    const r = await call(s.base, 'POST', 'fhir/R4/ValueSet/$expand', {
      token: s.token,
      body: {
        resourceType: 'Parameters',
        parameter: [
          {
            name: 'valueSet',
            resource: { resourceType: 'ValueSet', compose: { include: [{ system: CS }] } },
          },
        ],
      },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.expansion.contains.map((c: { code: string }) => c.code)).toEqual(['v1.10.0']);
  });
});
