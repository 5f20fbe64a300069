// A request may lower its own limit of unpaged entries (tooCostlyThreshold, or the X-TOO-COSTLY-THRESHOLD header
// the HL7 test suite's big-echo-no-limit sends), never raise it above EXPAND_MAX_UNPAGED (20 here).
import { describe, expect, it } from 'vitest';
import { call, useTestServer } from '../helpers/server.js';

const s = useTestServer({ config: { expandMaxUnpaged: 20 }, signIn: true });
const SYSTEM = 'http://example.org/threshold/cs';

/** POST $expand of an `n`-concept code system sent with the request, with extra parameters and headers. */
const expand = (extra: unknown[] = [], headers: Record<string, string> = {}, n = 15) =>
  call(s.base, 'POST', 'fhir/R4/ValueSet/$expand', {
    token: s.token,
    headers,
    body: {
      resourceType: 'Parameters',
      parameter: [
        {
          name: 'valueSet',
          resource: { resourceType: 'ValueSet', compose: { include: [{ system: SYSTEM }] } },
        },
        {
          name: 'tx-resource',
          resource: {
            resourceType: 'CodeSystem',
            url: SYSTEM,
            status: 'active',
            content: 'complete',
            concept: Array.from({ length: n }, (_, i) => ({ code: `c${i}`, display: `Concept ${i}` })),
          },
        },
        ...extra,
      ],
    },
  });

describe('tooCostlyThreshold', () => {
  it('the header lowers the limit: 15 entries over 10 are too costly, paged they are not', async () => {
    expect((await expand()).status).toBe(200);
    const over = await expand([], { 'x-too-costly-threshold': '10' });
    expect(over.status, over.text).toBe(422);
    expect(over.body.issue[0].code).toBe('too-costly');
    expect(over.body.issue[0].details.text).toContain('(>10)');
    const paged = await expand([{ name: 'count', valueInteger: 5 }], { 'x-too-costly-threshold': '10' });
    expect(paged.status, paged.text).toBe(200);
    expect(paged.body.expansion.total).toBe(15);
  });

  it('it cannot raise EXPAND_MAX_UNPAGED', async () => {
    const bigger = await expand([], { 'x-too-costly-threshold': '100000' }, 25);
    expect(bigger.status, bigger.text).toBe(422);
    expect(bigger.body.issue[0].details.text).toContain('(>20)');
  });

  it('the parameter wins over the header; a malformed header is a 400 naming it', async () => {
    const param = await expand([{ name: 'tooCostlyThreshold', valueInteger: 100 }], {
      'x-too-costly-threshold': '10',
    });
    expect(param.status, param.text).toBe(200);
    const bad = await expand([], { 'x-too-costly-threshold': 'lots' });
    expect(bad.status).toBe(400);
    expect(bad.body.issue[0].details.text).toMatch(/X-TOO-COSTLY-THRESHOLD must be a non-negative integer/);
  });
});
