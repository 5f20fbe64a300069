// The engine's errors: status, FHIR issue code, tx-issue-type and expression for unknown code systems, bad compose
// filters, too-costly expansions and bad parameters.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CodeSystemIndexBuilder,
  ExpansionEngine,
  TerminologyError,
  type ExpandRequest,
  type ValueSetInclude,
  type ValueSetResource,
} from '../../../src/terminology/engine/index.js';
import { HIER, GENDER, TestResolver, standardResolver, LIMITS, vsOf, codes, expectError } from './helpers.js';

describe('expandValueSet: compose', () => {
  let r: TestResolver;
  let engine: ExpansionEngine;
  const expand = (vs: ValueSetResource, req: ExpandRequest = {}, limits = LIMITS) =>
    engine.expand(vs, req, r, limits);
  beforeAll(() => {
    r = standardResolver();
    engine = new ExpansionEngine();
  });

  describe('errors', () => {
    it('unknown code system: 422 not-found with the tx-issue-type not-found', async () => {
      const err = await expand(vsOf([{ system: 'http://example.org/unknown' }])).catch((e: unknown) => e);
      expect((err as TerminologyError).txIssueType).toBe('not-found');
      await expectError(
        expand(vsOf([{ system: 'http://example.org/unknown' }])),
        422,
        'not-found',
        /A definition for CodeSystem 'http:\/\/example.org\/unknown' could not be found/,
      );
    });

    it('bad filters: 400 invalid naming the include and filter', async () => {
      const bad = (filter: ValueSetInclude['filter']) =>
        expand(vsOf([{ system: GENDER }, { system: HIER, filter }]));
      // The IG's message and issue type for a filter without a value; the path is the issue's expression.
      const noValue = await bad([
        { property: 'concept', op: 'is-a', value: 'heart' },
        { property: 'severity', op: '=' },
      ]).catch((e: unknown) => e as TerminologyError);
      expect(noValue).toMatchObject({
        status: 400,
        issueCode: 'invalid',
        txIssueType: 'vs-invalid',
        message: `The system ${HIER} filter with property = severity, op = = has no value`,
        expression: ['ValueSet.compose.include[1].filter[1]'],
      });
      await expectError(
        bad([{ property: 'concept', op: 'sounds-like', value: 'x' }]),
        400,
        'invalid',
        /include\[1\]\.filter\[0\].*unknown op 'sounds-like'/,
      );
      await expectError(
        bad([{ property: 'code', op: 'regex', value: '([a-' }]),
        400,
        'invalid',
        /include\[1\]\.filter\[0\].*invalid regular expression/,
      );
      await expectError(
        bad([{ property: 'colour', op: '=', value: 'red' }]),
        400,
        'invalid',
        /property 'colour' is not defined/,
      );
      await expectError(
        bad([{ property: 'severity', op: 'exists', value: 'maybe' }]),
        400,
        'invalid',
        /'exists' takes value 'true' or 'false'/,
      );
      await expectError(
        bad([{ property: 'severity', op: 'is-a', value: 'severe' }]),
        400,
        'invalid',
        /applies to property 'concept'/,
      );
    });

    it('too many entries without count: 422 too-costly (counted after the filter)', async () => {
      const vs = vsOf([{ system: HIER }]);
      await expectError(
        expand(vs, {}, { maxUnpaged: 10 }),
        422,
        'too-costly',
        /The value set 'http:\/\/example.org\/fhir\/ValueSet\/test' expansion has too many codes to produce \(>10\).*count and offset.*17 entries/,
      );
      expect((await expand(vs, { filter: 'hepat' }, { maxUnpaged: 10 })).expansion.total).toBe(4);
      expect(codes(await expand(vs, { count: 2 }, { maxUnpaged: 10 }))).toEqual(['disorder', 'liver']);
      expect((await expand(vs, { activeOnly: true }, { maxUnpaged: 16 })).expansion.total).toBe(16);
    });

    it('bad parameters: 400 invalid', async () => {
      const vs = vsOf([{ system: GENDER }]);
      await expectError(expand(vs, { offset: -1 }), 400, 'invalid', /offset must be a non-negative integer/);
      await expectError(expand(vs, { count: 1.5 }), 400, 'invalid', /count must be a non-negative integer/);
      await expectError(expand(vs, { systemVersion: ['nobar'] }), 400, 'invalid', /system-version/);
      await expectError(
        expand(vsOf([{}])),
        400,
        'invalid',
        /include\[0\] has neither a system nor a valueSet/,
      );
      await expectError(
        expand({ ...vs, version: '1' }, { valueSetVersion: '2' }),
        404,
        'not-found',
        /version 2 not found/,
      );
    });

    it('unknown listed code in a complete code system is left out; not-present content: 422', async () => {
      expect(
        codes(await expand(vsOf([{ system: GENDER, concept: [{ code: 'male' }, { code: 'M' }] }]))),
      ).toEqual(['male']);
      // Excluding a code the system lacks is harmless.
      expect(
        codes(await expand(vsOf([{ system: GENDER }], [{ system: GENDER, concept: [{ code: 'M' }] }]))),
      ).toEqual(['male', 'female', 'other', 'unknown']);
      const np = new TestResolver();
      np.addCodeSystem(
        CodeSystemIndexBuilder.build({ url: 'http://snomed.info/sct', content: 'not-present' }, []),
      );
      await expectError(
        engine.expand(vsOf([{ system: 'http://snomed.info/sct' }]), {}, np, LIMITS),
        422,
        'not-supported',
        /not-present/,
      );
    });

    it('errors carry an OperationOutcome', () => {
      const e = new TerminologyError(400, 'invalid', 'bad', ['ValueSet.compose.include[0]']);
      expect(e.toOperationOutcome()).toEqual({
        resourceType: 'OperationOutcome',
        issue: [
          {
            severity: 'error',
            code: 'invalid',
            diagnostics: 'bad',
            expression: ['ValueSet.compose.include[0]'],
          },
        ],
      });
    });
  });
});
