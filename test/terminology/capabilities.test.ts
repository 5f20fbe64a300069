// What terminology clients read before anything else, on a real server: the CapabilityStatement's terminology
// entries, [base]/$versions, and metadata?mode=terminology (TerminologyCapabilities) listing only shared code
// systems, never a project's own.
import { describe, expect, it } from 'vitest';
import { call, useTestServer } from '../helpers/server.js';

const s = useTestServer({ config: { loadCoreTerminology: true }, signIn: true });

const FEATURE = 'http://hl7.org/fhir/uv/application-feature/StructureDefinition/feature';

interface Ext {
  url: string;
  extension?: Ext[];
  [value: string]: unknown;
}

/** The value parts of the feature extensions, by their definition. */
function features(cs: { extension?: Ext[] }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of cs.extension ?? []) {
    if (e.url !== FEATURE) continue;
    const def = e.extension?.find((x) => x.url === 'definition')?.valueCanonical as string;
    const value = e.extension?.find((x) => x.url === 'value');
    out[def] = value && Object.entries(value).find(([k]) => k.startsWith('value'))?.[1];
  }
  return out;
}

describe('CapabilityStatement for terminology clients', () => {
  it('instantiates the terminology server statement and declares its operations and features', async () => {
    const r = await call(s.base, 'GET', 'fhir/R4/metadata');
    expect(r.status).toBe(200);
    const cs = r.body;
    expect(cs.instantiates).toContain('http://hl7.org/fhir/CapabilityStatement/terminology-server');
    expect(cs.software).toMatchObject({ version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(cs.software.releaseDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(cs.url).toMatch(/^http:\/\/[^/]+\/fhir\/R4\/metadata$/);
    expect(features(cs)).toEqual({
      'http://hl7.org/fhir/uv/tx-tests/FeatureDefinition/test-version':
        expect.stringMatching(/^\d+\.\d+\.\d+$/),
      'http://hl7.org/fhir/uv/tx-ecosystem/FeatureDefinition/CodeSystemAsParameter': true,
    });
    const resource = (type: string) =>
      cs.rest[0].resource.find((x: { type: string }) => x.type === type) as {
        operation: { name: string }[];
        interaction: { code: string }[];
      };
    expect(resource('CodeSystem').operation.map((o) => o.name)).toEqual(
      expect.arrayContaining(['lookup', 'validate-code', 'subsumes']),
    );
    expect(resource('ValueSet').operation.map((o) => o.name)).toEqual(
      expect.arrayContaining(['expand', 'validate-code']),
    );
    expect(resource('ValueSet').interaction.map((i) => i.code)).toEqual(
      expect.arrayContaining(['read', 'search-type']),
    );
    expect(cs.rest[0].operation.map((o: { name: string }) => o.name)).toContain('versions');
  });

  it('[base]/$versions names R4 as the one version and the default, without authentication', async () => {
    for (const method of ['GET', 'POST']) {
      const r = await call(s.base, method, 'fhir/R4/$versions');
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        resourceType: 'Parameters',
        parameter: [
          { name: 'version', valueCode: '4.0' },
          { name: 'default', valueCode: '4.0' },
        ],
      });
    }
  });

  it('metadata?mode=full is still the CapabilityStatement', async () => {
    const r = await call(s.base, 'GET', 'fhir/R4/metadata?mode=full');
    expect(r.body.resourceType).toBe('CapabilityStatement');
  });
});

describe('metadata?mode=terminology', () => {
  it('lists the shared code systems with their versions, and the expansion parameters', async () => {
    const r = await call(s.base, 'GET', 'fhir/R4/metadata?mode=terminology');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/application\/fhir\+json/);
    const tc = r.body;
    expect(tc).toMatchObject({ resourceType: 'TerminologyCapabilities', status: 'active', kind: 'instance' });
    const gender = tc.codeSystem.find(
      (c: { uri: string }) => c.uri === 'http://hl7.org/fhir/administrative-gender',
    );
    expect(gender.version).toEqual([{ code: '4.0.1' }]);
    const names = tc.expansion.parameter.map((p: { name: string }) => p.name);
    for (const n of ['activeOnly', 'count', 'offset', 'displayLanguage', 'tx-resource', 'system-version'])
      expect(names).toContain(n);
    // What names the value set is not an expansion parameter.
    for (const n of ['url', 'valueSet', 'valueSetVersion']) expect(names).not.toContain(n);
  });

  it("never lists a project's own code system, to anyone", async () => {
    const url = 'http://example.org/capabilities/private-system';
    const created = await call(s.base, 'POST', 'fhir/R4/CodeSystem', {
      token: s.token,
      body: {
        resourceType: 'CodeSystem',
        url,
        version: '7',
        status: 'active',
        content: 'complete',
        concept: [{ code: 'a', display: 'A' }],
      },
    });
    expect(created.status).toBe(201);
    for (const token of [undefined, s.token]) {
      const r = await call(s.base, 'GET', 'fhir/R4/metadata?mode=terminology', { token });
      expect(r.status).toBe(200);
      expect(r.text).not.toContain(url);
    }
  });
});
