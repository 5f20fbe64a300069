// What the engine's unit tests share: the terminology fixtures, a resolver over in-memory code systems and value
// sets, value set and expansion shorthands, and an assertion for typed engine errors.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import {
  CodeSystemIndex,
  TerminologyError,
  indexCodeSystemResource,
  type CodeSystemResource,
  type ExpandLimits,
  type Resolver,
  type ValueSetInclude,
  type ValueSetContains,
  type ValueSetResource,
  type ValueSetResourceWithExpansion,
} from '../../../src/terminology/engine/index.js';

export const FIXTURES = path.join(import.meta.dirname, '..', '..', 'fixtures', 'terminology');
export const load = <T>(name: string): T =>
  JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8')) as T;

export const HIER = 'http://example.org/fhir/CodeSystem/example-hierarchical';
export const GENDER = 'http://hl7.org/fhir/administrative-gender';
export const LOINC = 'http://loinc.org';
export const VERSIONED = 'http://example.org/fhir/CodeSystem/versioned';

/** Code systems by url (the last registered version is the current one) and value sets by url. */
export class TestResolver implements Resolver {
  readonly systems = new Map<string, CodeSystemIndex[]>();
  codeSystemVersions?: (url: string) => Promise<string[]>;
  readonly valueSets = new Map<string, ValueSetResource>();
  calls = 0;

  addCodeSystem(cs: CodeSystemResource | CodeSystemIndex): CodeSystemIndex {
    const idx = cs instanceof CodeSystemIndex ? cs : indexCodeSystemResource(cs);
    const list = (this.systems.get(idx.url) ?? []).filter((x) => x.version !== idx.version);
    list.push(idx);
    this.systems.set(idx.url, list);
    return idx;
  }

  addValueSet(vs: ValueSetResource): void {
    this.valueSets.set(vs.url!, vs);
  }

  async codeSystem(url: string, version?: string): Promise<CodeSystemIndex | undefined> {
    this.calls++;
    const list = this.systems.get(url) ?? [];
    return version === undefined ? list[list.length - 1] : list.find((x) => x.version === version);
  }

  async valueSet(url: string, version?: string): Promise<ValueSetResource | undefined> {
    const vs = this.valueSets.get(url);
    return vs && (version === undefined || vs.version === version) ? vs : undefined;
  }
}

export function standardResolver(): TestResolver {
  const r = new TestResolver();
  r.addCodeSystem(load('CodeSystem-example-hierarchical.json'));
  r.addCodeSystem(load('CodeSystem-administrative-gender.json'));
  r.addCodeSystem(load('CodeSystem-loinc-fragment.json'));
  r.addCodeSystem(load('CodeSystem-versioned-1.0.0.json'));
  r.addCodeSystem(load('CodeSystem-versioned-2.0.0.json'));
  return r;
}

export const LIMITS: ExpandLimits = { maxUnpaged: 1000 };
export const DISPLAY_USE = {
  system: 'http://terminology.hl7.org/CodeSystem/hl7TermMaintInfra',
  code: 'preferredForLanguage',
  display: 'Preferred For Language',
};

export const vsOf = (
  include: ValueSetInclude[],
  exclude?: ValueSetInclude[],
  extra?: object,
): ValueSetResource => ({
  resourceType: 'ValueSet',
  url: 'http://example.org/fhir/ValueSet/test',
  status: 'active',
  compose: { include, ...(exclude ? { exclude } : {}) },
  ...extra,
});

/** The codes of an expansion in order, depth first (a hierarchical expansion lists a parent before its children). */
export const codes = (r: ValueSetResourceWithExpansion): string[] => flatCodes(r.expansion.contains);
export function flatCodes(list: ValueSetContains[] | undefined): string[] {
  return (list ?? []).flatMap((c) => [c.code!, ...flatCodes(c.contains)]);
}
/** A concept property as R4 carries it in an expansion entry. */
export const propertyExt = (code: string, value: Record<string, unknown>) => ({
  url: 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.contains.property',
  extension: [
    { url: 'code', valueCode: code },
    { url: 'value', ...value },
  ],
});
export const statusProperty = (status: string) => propertyExt('status', { valueCode: status });

export const param = (r: ValueSetResourceWithExpansion, name: string): unknown[] =>
  (r.expansion.parameter ?? [])
    .filter((p) => p.name === name)
    .map((p) => p.valueString ?? p.valueBoolean ?? p.valueInteger ?? p.valueCode ?? p.valueUri);

export async function expectError(
  p: Promise<unknown>,
  status: number,
  issueCode: string,
  message: RegExp,
): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TerminologyError);
  const te = err as TerminologyError;
  expect({ status: te.status, issueCode: te.issueCode }).toEqual({ status, issueCode });
  expect(te.message).toMatch(message);
}

export const ALL_HIER = [
  'disorder',
  'liver',
  'hepatitis',
  'hepatitis-a',
  'hepatitis-b',
  'cirrhosis',
  'hepatorenal',
  'heart',
  'hf',
  'hf-acute',
  'hf-chronic',
  'old-hf',
  'kidney',
  'meniere',
  'finding',
  'fever',
  'cough',
];
