// Code system versions in compose: include.version, system-version, force-system-version, check-system-version,
// wildcards, several versions of one code system and versionsMatch.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ExpansionEngine,
  type ExpandRequest,
  type ValueSetInclude,
  type ValueSetResource,
} from '../../../src/terminology/engine/index.js';
import {
  VERSIONED,
  TestResolver,
  standardResolver,
  LIMITS,
  vsOf,
  codes,
  param,
  expectError,
} from './helpers.js';

describe('expandValueSet: compose', () => {
  let r: TestResolver;
  let engine: ExpansionEngine;
  const expand = (vs: ValueSetResource, req: ExpandRequest = {}, limits = LIMITS) =>
    engine.expand(vs, req, r, limits);
  beforeAll(() => {
    r = standardResolver();
    engine = new ExpansionEngine();
  });

  describe('code system versions', () => {
    it('an include without version uses the current version', async () => {
      const res = await expand(vsOf([{ system: VERSIONED }]));
      expect(codes(res)).toEqual(['a', 'b', 'c']);
      expect(res.expansion.contains![0]).toMatchObject({ display: 'Alpha (revised)' });
      expect(res.expansion.contains![0].version).toBeUndefined();
      expect(param(res, 'used-codesystem')).toEqual([`${VERSIONED}|2.0.0`]);
    });

    it('include.version selects the version', async () => {
      const res = await expand(vsOf([{ system: VERSIONED, version: '1.0.0' }]));
      expect(codes(res)).toEqual(['a', 'b']);
      expect(res.expansion.contains![0]).toEqual({ system: VERSIONED, code: 'a', display: 'Alpha' });
      expect(param(res, 'used-codesystem')).toEqual([`${VERSIONED}|1.0.0`]);
    });

    it('system-version fills in missing versions; force-system-version overrides', async () => {
      const vs = vsOf([{ system: VERSIONED }]);
      const sv = await expand(vs, { systemVersion: [`${VERSIONED}|1.0.0`] });
      expect(codes(sv)).toEqual(['a', 'b']);
      // Echoed because it chose the version (the IG's expected expansions show it so).
      expect(param(sv, 'system-version')).toEqual([`${VERSIONED}|1.0.0`]);
      expect(param(sv, 'used-codesystem')).toEqual([`${VERSIONED}|1.0.0`]);
      const pinned = vsOf([{ system: VERSIONED, version: '2.0.0' }]);
      expect(codes(await expand(pinned, { systemVersion: [`${VERSIONED}|1.0.0`] }))).toEqual(['a', 'b', 'c']);
      expect(codes(await expand(pinned, { forceSystemVersion: [`${VERSIONED}|1.0.0`] }))).toEqual(['a', 'b']);
    });

    it('a code in two versions is two entries, each with its version; versionsMatch merges them', async () => {
      const vs = vsOf([
        { system: VERSIONED, version: '1.0.0', concept: [{ code: 'a' }] },
        { system: VERSIONED, version: '2.0.0' },
      ]);
      const res = await expand(vs);
      // The latest version's include comes first; every entry names its version (two are named).
      expect(res.expansion.contains!.map((c) => `${c.code}@${c.version}`)).toEqual([
        'a@2.0.0',
        'b@2.0.0',
        'c@2.0.0',
        'a@1.0.0',
      ]);
      expect(param(res, 'used-codesystem')).toEqual([`${VERSIONED}|2.0.0`, `${VERSIONED}|1.0.0`]);
      const merged = await expand(vs, { versionsMatch: true });
      expect(merged.expansion.contains!.map((c) => `${c.code}@${c.version}`)).toEqual([
        'a@2.0.0',
        'b@2.0.0',
        'c@2.0.0',
      ]);
      expect(param(merged, 'versionsMatch')).toEqual([true]);
    });

    it('excluding one version from another removes the codes of every version (versionsMatch is implied)', async () => {
      const vs = vsOf([{ system: VERSIONED, version: '2.0.0' }], [{ system: VERSIONED, version: '1.0.0' }]);
      const res = await expand(vs);
      expect(codes(res)).toEqual(['c']);
      expect(param(res, 'versionsMatch')).toEqual([true]);
      // Asked not to match versions, the exclusion is of version 1.0.0 only.
      const scoped = await expand(vs, { versionsMatch: false });
      expect(codes(scoped)).toEqual(['a', 'b', 'c']);
      expect(param(scoped, 'versionsMatch')).toEqual([]);
      expect(param(scoped, 'used-codesystem').sort()).toEqual([`${VERSIONED}|1.0.0`, `${VERSIONED}|2.0.0`]);
    });

    it('an unknown version is an unknown code system', async () => {
      await expectError(
        expand(vsOf([{ system: VERSIONED, version: '9.9' }])),
        422,
        'not-found',
        /A definition for CodeSystem 'http:\/\/example.org\/fhir\/CodeSystem\/versioned' version '9.9' could not be found/,
      );
    });

    it('a wildcard version (1.x, 2.0.x, *) takes the highest matching version', async () => {
      // The test resolver knows no version list: give it one, as the service does.
      const rr = standardResolver();
      rr.codeSystemVersions = async (url: string) => (url === VERSIONED ? ['1.0.0', '2.0.0'] : []);
      const e = new ExpansionEngine();
      const used = async (include: ValueSetInclude, req: ExpandRequest = {}) =>
        param(await e.expand(vsOf([include]), req, rr, LIMITS), 'used-codesystem');
      expect(await used({ system: VERSIONED, version: '1.x' })).toEqual([`${VERSIONED}|1.0.0`]);
      expect(await used({ system: VERSIONED, version: '2.0.x' })).toEqual([`${VERSIONED}|2.0.0`]);
      expect(await used({ system: VERSIONED, version: '*' })).toEqual([`${VERSIONED}|2.0.0`]);
      await expectError(
        e.expand(vsOf([{ system: VERSIONED, version: '3.x' }]), {}, rr, LIMITS),
        422,
        'not-found',
        /version '3.x' could not be found, so the value set cannot be expanded. Valid versions: 1.0.0 or 2.0.0/,
      );
      // force-system-version and system-version take patterns too, and are echoed when they chose the version.
      const forced = await e.expand(
        vsOf([{ system: VERSIONED, version: '2.0.0' }]),
        { forceSystemVersion: [`${VERSIONED}|1.x`] },
        rr,
        LIMITS,
      );
      expect(param(forced, 'used-codesystem')).toEqual([`${VERSIONED}|1.0.0`]);
      expect(param(forced, 'force-system-version')).toEqual([`${VERSIONED}|1.x`]);
      const pinned = await e.expand(
        vsOf([{ system: VERSIONED, version: '2.0.0' }]),
        { systemVersion: [`${VERSIONED}|1.0.0`] },
        rr,
        LIMITS,
      );
      // system-version only fills in a missing version: not used here, so not echoed.
      expect(param(pinned, 'used-codesystem')).toEqual([`${VERSIONED}|2.0.0`]);
      expect(param(pinned, 'system-version')).toEqual([]);
    });

    it('check-system-version: the default for an include without version, an error for another version', async () => {
      const rr = standardResolver();
      rr.codeSystemVersions = async (url: string) => (url === VERSIONED ? ['1.0.0', '2.0.0'] : []);
      const e = new ExpansionEngine();
      const res = await e.expand(
        vsOf([{ system: VERSIONED }]),
        { checkSystemVersion: [`${VERSIONED}|1.x`] },
        rr,
        LIMITS,
      );
      expect(param(res, 'used-codesystem')).toEqual([`${VERSIONED}|1.0.0`]);
      expect(param(res, 'check-system-version')).toEqual([`${VERSIONED}|1.x`]);
      const ok = await e.expand(
        vsOf([{ system: VERSIONED, version: '1.0.0' }]),
        { checkSystemVersion: [`${VERSIONED}|1.x`] },
        rr,
        LIMITS,
      );
      expect(param(ok, 'check-system-version')).toEqual([]);
      await expectError(
        e.expand(
          vsOf([{ system: VERSIONED, version: '2.0.0' }]),
          { checkSystemVersion: [`${VERSIONED}|1.x`] },
          rr,
          LIMITS,
        ),
        400,
        'exception',
        /The version '2.0.0' is not allowed for system '.*versioned': required to be '1.x' by a version-check parameter/,
      );
    });
  });
});
