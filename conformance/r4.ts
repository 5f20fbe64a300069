// The official runner talks to an R4 server through its R4 client: each request (written in R5 in the suite) is
// converted to R4 before it is sent, and each response is parsed as R4 and converted back to R5 before it is
// compared (TxTester with TerminologyClientR4 and the VersionConvertor_40_50 / 40_N convertors in
// hapifhir/org.hl7.fhir.core). This file does what those convertors do to the elements the suite's resources
// use, and drops, as the R4 parser does (it ignores unknown content), the R5-only elements a response carries
// instead of their R4 cross-version extensions.
import type { Json } from './compare.js';

type Obj = { [k: string]: Json | undefined };
const isObject = (v: Json | undefined): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: Json | undefined): Obj[] => (Array.isArray(v) ? v.filter(isObject) : []);

/** Cross-version extensions the convertors use (VersionConvertorConstants). */
export const EXT = {
  filterOp: 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.compose.include.filter.op',
  composeProperty: 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.compose.property',
  expansionProperty: 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.property',
  containsProperty:
    'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.contains.property',
  versionAlgorithm:
    'http://hl7.org/fhir/5.0/StructureDefinition/extension-CanonicalResource.versionAlgorithm',
  vsDesignationUse:
    'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.compose.include.concept.designation.additionalUse',
  csDesignationUse:
    'http://hl7.org/fhir/5.0/StructureDefinition/extension-CodeSystem.concept.designation.additionalUse',
} as const;

/** The marker an unmerged branch of the convertors sets on a ValueSet whose filter operator had to move to an
 * extension; the current runner does not send it. A response that carries it has it removed. */
export const OMITTED_CODE_RULES = 'https://hl7.org/fhir/implicit-rules/omitted-mandatory-interversion-code';

/** Filter operators R4 has no code for (moved to EXT.filterOp). */
const R5_FILTER_OPS = new Set(['child-of', 'descendent-leaf']);

function addExtension(o: Obj, url: string, value: Obj): void {
  const ext = Array.isArray(o.extension) ? o.extension : (o.extension = []);
  ext.push({ url, ...value });
}

function valueOf(o: Obj): Obj {
  const out: Obj = {};
  for (const k of Object.keys(o)) if (k.startsWith('value')) out[k] = o[k];
  return out;
}

/** versionAlgorithm[x] (R5) becomes the cross-version extension on the resource. */
function versionAlgorithmDown(r: Obj): void {
  for (const k of ['versionAlgorithmString', 'versionAlgorithmCoding']) {
    if (r[k] === undefined) continue;
    addExtension(r, EXT.versionAlgorithm, {
      [k === 'versionAlgorithmString' ? 'valueString' : 'valueCoding']: r[k],
    });
    delete r[k];
  }
}

function designationsDown(concepts: Obj[], url: string): void {
  for (const c of concepts) {
    for (const d of list(c.designation)) {
      for (const u of list(d.additionalUse)) addExtension(d, url, { valueCoding: u });
      delete d.additionalUse;
    }
  }
}

function valueSetDown(vs: Obj): void {
  versionAlgorithmDown(vs);
  const compose = vs.compose;
  if (isObject(compose)) {
    for (const set of [...list(compose.include), ...list(compose.exclude)]) {
      for (const f of list(set.filter)) {
        if (typeof f.op === 'string' && R5_FILTER_OPS.has(f.op)) {
          f._op = { extension: [{ url: EXT.filterOp, valueCode: f.op }] };
          delete f.op;
        }
      }
      designationsDown(list(set.concept), EXT.vsDesignationUse);
    }
    if (Array.isArray(compose.property)) {
      for (const p of compose.property) addExtension(compose, EXT.composeProperty, { valueString: p });
      delete compose.property;
    }
  }
  const exp = vs.expansion;
  if (isObject(exp)) {
    for (const p of list(exp.property)) {
      addExtension(exp, EXT.expansionProperty, {
        extension: [
          { url: 'code', valueCode: p.code },
          { url: 'uri', valueUri: p.uri },
        ],
      });
    }
    delete exp.property;
    const walk = (cs: Obj[]): void => {
      for (const c of cs) {
        for (const p of list(c.property)) {
          addExtension(c, EXT.containsProperty, {
            extension: [
              { url: 'code', valueCode: p.code },
              { url: 'value', ...valueOf(p) },
            ],
          });
        }
        delete c.property;
        walk(list(c.contains));
      }
    };
    walk(list(exp.contains));
  }
}

function codeSystemDown(cs: Obj): void {
  versionAlgorithmDown(cs);
  const walk = (cs: Obj[]): void => {
    designationsDown(cs, EXT.csDesignationUse);
    for (const c of cs) walk(list(c.concept));
  };
  walk(list(cs.concept));
}

/** An R5 resource as the runner sends it to an R4 server (converted in place; returned for convenience). */
export function toR4(resource: Json): Json {
  if (!isObject(resource)) return resource;
  if (resource.resourceType === 'ValueSet') valueSetDown(resource);
  else if (resource.resourceType === 'CodeSystem') codeSystemDown(resource);
  else if (resource.resourceType === 'ConceptMap') conceptMapDown(resource);
  else if (resource.resourceType === 'Parameters') {
    for (const p of list(resource.parameter)) if (p.resource !== undefined) toR4(p.resource);
  }
  for (const c of list(resource.contained)) toR4(c);
  return resource;
}

/** R5 `relationship` as R4 `equivalence` (ConceptMap40_50.convertConceptMapEquivalence). */
const EQUIVALENCE: Readonly<Record<string, string>> = {
  'related-to': 'relatedto',
  equivalent: 'equivalent',
  'source-is-narrower-than-target': 'wider',
  'source-is-broader-than-target': 'narrower',
  'not-related-to': 'disjoint',
};

/** A ConceptMap as ConceptMap40_50 writes it for R4: the scopes as source/target[x], each target's relationship as
 * equivalence (related-to when it has none), the unmapped relationship dropped. */
function conceptMapDown(cm: Obj): void {
  for (const [r5, r4] of [
    ['sourceScopeUri', 'sourceUri'],
    ['sourceScopeCanonical', 'sourceCanonical'],
    ['targetScopeUri', 'targetUri'],
    ['targetScopeCanonical', 'targetCanonical'],
  ]) {
    if (cm[r5] !== undefined) {
      cm[r4] = cm[r5];
      delete cm[r5];
    }
  }
  for (const g of list(cm.group)) {
    for (const e of list(g.element)) {
      for (const t of list(e.target)) {
        const rel = typeof t.relationship === 'string' ? t.relationship : undefined;
        delete t.relationship;
        t.equivalence = rel === undefined ? 'relatedto' : (EQUIVALENCE[rel] ?? rel);
      }
    }
    if (isObject(g.unmapped)) delete g.unmapped.relationship;
  }
}

/** Drops the elements R4 does not have, as the R4 parser does with unknown content (a server that sends
 * `contains.property` instead of its extension loses those properties, under the real runner too). */
function dropR5Only(vs: Obj): void {
  delete vs.versionAlgorithmString;
  delete vs.versionAlgorithmCoding;
  if (isObject(vs.compose)) delete vs.compose.property;
  const exp = vs.expansion;
  if (!isObject(exp)) return;
  delete exp.property;
  const stack = [...list(exp.contains)];
  while (stack.length > 0) {
    const c = stack.pop()!;
    delete c.property;
    stack.push(...list(c.contains));
  }
}

function takeExtensions(o: Obj, url: string): Obj[] {
  const ext = list(o.extension);
  const taken = ext.filter((e) => e.url === url);
  if (taken.length > 0) {
    const rest = ext.filter((e) => e.url !== url);
    if (rest.length > 0) o.extension = rest;
    else delete o.extension;
  }
  return taken;
}

const sub = (e: Obj, name: string): Obj | undefined => list(e.extension).find((x) => x.url === name);
const subString = (e: Obj, name: string): Json | undefined => {
  const s = sub(e, name);
  return s ? Object.values(valueOf(s))[0] : undefined;
};

/**
 * A response as the runner's R4 client hands it on: parsed as R4 (R5-only elements dropped, as the R4 parser
 * drops unknown content) and converted to R5 (cross-version extensions back to their elements), in place.
 */
export function fromR4(resource: Json): void {
  if (!isObject(resource) || resource.resourceType !== 'ValueSet') return;
  dropR5Only(resource);
  if (resource.implicitRules === OMITTED_CODE_RULES) delete resource.implicitRules;
  for (const e of takeExtensions(resource, EXT.versionAlgorithm)) {
    const v = valueOf(e);
    if (v.valueString !== undefined) resource.versionAlgorithmString = v.valueString;
    if (v.valueCoding !== undefined) resource.versionAlgorithmCoding = v.valueCoding;
  }
  const compose = resource.compose;
  if (isObject(compose)) {
    const props = takeExtensions(compose, EXT.composeProperty).map((e) => valueOf(e).valueString ?? null);
    if (props.length > 0) compose.property = props;
    for (const set of [...list(compose.include), ...list(compose.exclude)]) {
      for (const f of list(set.filter)) {
        const op = isObject(f._op) ? takeExtensions(f._op, EXT.filterOp)[0] : undefined;
        if (op) {
          f.op = valueOf(op).valueCode ?? null;
          if (isObject(f._op) && Object.keys(f._op).length === 0) delete f._op;
        }
      }
    }
  }
  const exp = resource.expansion;
  if (isObject(exp)) {
    const props = takeExtensions(exp, EXT.expansionProperty).map((e) => {
      const p: Obj = {};
      const code = subString(e, 'code');
      const uri = subString(e, 'uri');
      if (code !== undefined) p.code = code;
      if (uri !== undefined) p.uri = uri;
      return p;
    });
    if (props.length > 0) exp.property = props;
    const walk = (cs: Obj[]): void => {
      for (const c of cs) {
        const ps = takeExtensions(c, EXT.containsProperty).map((e) => {
          const p: Obj = { code: subString(e, 'code') ?? null };
          const v = sub(e, 'value') ?? sub(e, 'value[x]');
          if (v) Object.assign(p, valueOf(v));
          return p;
        });
        if (ps.length > 0) c.property = ps;
        walk(list(c.contains));
      }
    };
    walk(list(exp.contains));
  }
}
