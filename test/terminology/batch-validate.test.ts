// ValueSet/$batch-validate-code and CodeSystem/$batch-validate-code on a real server: answers in order, a
// validation's own parameters over the request's, one validation's mistake as its own answer, project walls, and
// hostile inputs (each a clear 4xx).
import { beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ProjectAdmin } from '../helpers/projects.js';
import { call, useTestServer } from '../helpers/server.js';

const s = useTestServer({ config: { terminologyBatchMax: 5 }, signIn: true });

const CS = 'http://example.org/batch/colours';
const VS = 'http://example.org/batch/primary';

interface Param {
  name: string;
  resource?: { resourceType: string; parameter?: Param[]; issue?: { details?: { text?: string } }[] };
  [k: string]: unknown;
}

const value = (p: { parameter?: Param[] } | undefined, name: string): unknown => {
  const e = p?.parameter?.find((x) => x.name === name);
  return e ? Object.entries(e).find(([k]) => k.startsWith('value'))?.[1] : undefined;
};

const coding = (code: string, display?: string) => ({
  name: 'validation',
  resource: {
    resourceType: 'Parameters',
    parameter: [{ name: 'coding', valueCoding: { system: CS, code, ...(display ? { display } : {}) } }],
  },
});

let other: ProjectAdmin;

beforeAll(async () => {
  const cs = await call(s.base, 'POST', 'fhir/R4/CodeSystem', {
    token: s.token,
    body: {
      resourceType: 'CodeSystem',
      url: CS,
      version: '1',
      status: 'active',
      content: 'complete',
      concept: [
        { code: 'red', display: 'Red' },
        { code: 'blue', display: 'Blue' },
        { code: 'green', display: 'Green' },
      ],
    },
  });
  expect(cs.status).toBe(201);
  const vs = await call(s.base, 'POST', 'fhir/R4/ValueSet', {
    token: s.token,
    body: {
      resourceType: 'ValueSet',
      url: VS,
      status: 'active',
      compose: { include: [{ system: CS, concept: [{ code: 'red' }, { code: 'blue' }] }] },
    },
  });
  expect(vs.status).toBe(201);
  other = await createProject(s.base, s.token, 'Batch other project');
});

const batch = (type: string, parameter: unknown[], token: string | undefined = s.token) =>
  call(s.base, 'POST', `fhir/R4/${type}/$batch-validate-code`, {
    token,
    body: { resourceType: 'Parameters', parameter },
  });

describe('$batch-validate-code', () => {
  it('answers each validation in order, as $validate-code would', async () => {
    const r = await batch('ValueSet', [
      { name: 'url', valueUri: VS },
      coding('red'),
      coding('green'),
      coding('blue', 'Blue'),
    ]);
    expect(r.status).toBe(200);
    expect(r.body.resourceType).toBe('Parameters');
    const answers = (r.body.parameter as Param[]).map((p) => {
      expect(p.name).toBe('validation');
      return [value(p.resource, 'code'), value(p.resource, 'result')];
    });
    expect(answers).toEqual([
      ['red', true],
      ['green', false],
      ['blue', true],
    ]);
    const single = await call(s.base, 'POST', 'fhir/R4/ValueSet/$validate-code', {
      token: s.token,
      body: {
        resourceType: 'Parameters',
        parameter: [{ name: 'url', valueUri: VS }, coding('green').resource.parameter[0]],
      },
    });
    expect((r.body.parameter as Param[])[1].resource).toEqual(single.body);
  });

  it("lets a validation's own parameter win over the request's", async () => {
    const own = coding('red', 'Rouge');
    own.resource.parameter.push({ name: 'lenient-display-validation', valueBoolean: false } as never);
    const r = await batch('ValueSet', [
      { name: 'url', valueUri: VS },
      { name: 'lenient-display-validation', valueBoolean: true },
      coding('red', 'Rouge'),
      own,
    ]);
    expect(r.status).toBe(200);
    const [lenient, strict] = (r.body.parameter as Param[]).map((p) => p.resource);
    expect(value(lenient, 'result')).toBe(true);
    expect(value(strict, 'result')).toBe(false);
  });

  it('answers a validation without a code, or with a bad parameter, with its own OperationOutcome', async () => {
    const r = await batch('ValueSet', [
      { name: 'url', valueUri: VS },
      {
        name: 'validation',
        resource: {
          resourceType: 'Parameters',
          parameter: [{ name: 'codingX', valueCoding: { code: 'red' } }],
        },
      },
      {
        name: 'validation',
        resource: {
          resourceType: 'Parameters',
          parameter: [
            { name: 'code', valueCode: 'red' },
            { name: 'nonsense', valueString: 'x' },
          ],
        },
      },
      coding('red'),
    ]);
    expect(r.status).toBe(200);
    const [none, bad, good] = (r.body.parameter as Param[]).map((p) => p.resource!);
    expect(none.resourceType).toBe('OperationOutcome');
    expect(none.issue![0].details!.text).toMatch(/^Unable to find code to validate/);
    expect(bad.resourceType).toBe('OperationOutcome');
    expect(bad.issue![0].details!.text).toMatch(/nonsense/);
    expect(value(good, 'result')).toBe(true);
  });

  it('CodeSystem/$batch-validate-code checks codes against a code system', async () => {
    const r = await batch('CodeSystem', [{ name: 'url', valueUri: CS }, coding('green'), coding('purple')]);
    expect(r.status).toBe(200);
    expect((r.body.parameter as Param[]).map((p) => value(p.resource, 'result'))).toEqual([true, false]);
  });

  it("sees only the caller's project: another project's value set is not found", async () => {
    const r = await batch('ValueSet', [{ name: 'url', valueUri: VS }, coding('red')], other.token);
    expect(r.status).toBe(200);
    const answer = (r.body.parameter as Param[])[0].resource!;
    expect(JSON.stringify(answer)).toMatch(/not.?found|could not be found|Unable to find/i);
    expect(value(answer, 'result')).not.toBe(true);
  });

  it('refuses more validations than TERMINOLOGY_BATCH_MAX with 422 naming the setting', async () => {
    const r = await batch('ValueSet', [
      { name: 'url', valueUri: VS },
      ...['red', 'blue', 'red', 'blue', 'red', 'blue'].map((c) => coding(c)),
    ]);
    expect(r.status).toBe(422);
    expect(r.body.issue[0].code).toBe('too-costly');
    expect(r.body.issue[0].details.text).toMatch(/TERMINOLOGY_BATCH_MAX/);
  });

  it('refuses a request that is not a batch with a clear 400, and anonymous callers with 401', async () => {
    const none = await batch('ValueSet', [{ name: 'url', valueUri: VS }]);
    expect(none.status).toBe(400);
    expect(none.body.issue[0].details.text).toMatch(/at least one validation/);
    const notParameters = await batch('ValueSet', [{ name: 'validation', valueString: 'x' }]);
    expect(notParameters.status).toBe(400);
    expect(notParameters.body.issue[0].details.text).toMatch(/validation\) must be a Parameters resource/);
    const bundle = await call(s.base, 'POST', 'fhir/R4/ValueSet/$batch-validate-code', {
      token: s.token,
      body: { resourceType: 'Bundle' },
    });
    expect(bundle.status).toBe(400);
    const anonymous = await call(s.base, 'POST', 'fhir/R4/ValueSet/$batch-validate-code', {
      body: { resourceType: 'Parameters', parameter: [coding('red')] },
    });
    expect(anonymous.status).toBe(401);
  });
});
