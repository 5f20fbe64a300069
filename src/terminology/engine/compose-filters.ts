// Compose filters (ValueSet.compose.include.filter): the concepts of one code system a filter selects, as a mask
// by ordinal. Hierarchy operators walk the index's hierarchy; `=`, `in`, `not-in`, `exists` and `regex` (RE2, in
// event-loop slices under a time budget) compare the values of a built-in or code system property.
import { FLAG_ABSTRACT, FLAG_INACTIVE, type CodeSystemIndex } from './code-system-index.js';
import { EXT } from './concept-details.js';
import { eclMaskReady } from './ecl/index.js';
import { invalid, TerminologyError, withTxIssueType } from './errors.js';
import {
  compileFilterRegex,
  DEFAULT_REGEX_LIMITS,
  runSliced,
  type RegexLimits,
  type RegexSpent,
} from './safe-regex.js';
import type { ValueSetFilter } from './types.js';

const HIERARCHY_OPS = new Set([
  'is-a',
  'descendent-of',
  'is-not-a',
  'generalizes',
  'child-of',
  'descendent-leaf',
]);
const KNOWN_OPS = new Set([...HIERARCHY_OPS, '=', 'in', 'not-in', 'regex', 'exists']);
const BUILTIN_PROPS = new Set([
  'concept',
  'code',
  'display',
  'parent',
  'child',
  'status',
  'inactive',
  'notSelectable',
]);

/** A filter's operator: `op`, or an R5 operator an R4 client sends as the cross-version extension of `op`. */
function filterOp(f: ValueSetFilter): string | undefined {
  if (f.op) return f.op;
  const ext = f._op?.extension?.find((e) => e.url === EXT.filterOp);
  return typeof ext?.valueCode === 'string' ? ext.valueCode : undefined;
}

/** The concepts of src a compose filter selects, as a mask by ordinal (a promise when a regex filter needed to
 * yield the event loop). */
export function evaluateFilter(
  src: CodeSystemIndex,
  f: ValueSetFilter,
  path: string,
  regexLimits: RegexLimits = DEFAULT_REGEX_LIMITS,
  regexSpent: RegexSpent = { ms: 0 },
): Uint8Array | Promise<Uint8Array> {
  const { property, value } = f;
  const op = filterOp(f);
  const where = `${path} (${property ?? '?'} ${op ?? '?'} ${value ?? '?'})`;
  if (!property) throw vsInvalid(`Filter ${where} has no property`, path);
  if (!op) throw vsInvalid(`Filter ${where} has no op`, path);
  if (!KNOWN_OPS.has(op)) {
    throw vsInvalid(`Filter ${where}: unknown op '${op}' (supported: ${[...KNOWN_OPS].join(', ')})`, path);
  }
  if (value === undefined || value === null || value === '') {
    throw vsInvalid(
      `The system ${src.url} filter with property = ${property}, op = ${op} has no value`,
      path,
    );
  }
  if (src.url === SNOMED_CT) {
    const snomed = snomedFilter(src, property, op, value, where, path);
    if (snomed) return snomed;
  }
  const n = src.size;
  const mask = new Uint8Array(n);

  if (HIERARCHY_OPS.has(op)) {
    if (property !== 'concept' && property !== 'code') {
      throw invalid(`Filter ${where}: op '${op}' applies to property 'concept' only`, [path]);
    }
    const ord = src.lookupCode(value);
    if (ord < 0) {
      if (op === 'is-not-a') mask.fill(1);
      return mask;
    }
    switch (op) {
      case 'is-a':
        return src.descendantsMask(ord, true);
      case 'descendent-of':
        return src.descendantsMask(ord, false);
      case 'child-of':
        for (const c of src.childrenOf(ord)) mask[c] = 1;
        return mask;
      case 'descendent-leaf': {
        const d = src.descendantsMask(ord, false);
        for (let i = 0; i < n; i++) if (d[i] && src.childrenOf(i).length === 0) mask[i] = 1;
        return mask;
      }
      case 'generalizes':
        return src.ancestorsMask(ord, true);
      default: {
        const d = src.descendantsMask(ord, true);
        for (let i = 0; i < n; i++) mask[i] = d[i] ^ 1;
        return mask;
      }
    }
  }

  if (!BUILTIN_PROPS.has(property) && !src.propertyCodes.has(property)) {
    throw invalid(`Filter ${where}: property '${property}' is not defined by code system ${src.url}`, [path]);
  }
  const valuesOf = propertyGetter(src, property);

  if (op === 'exists') {
    if (value !== 'true' && value !== 'false') {
      throw invalid(`Filter ${where}: 'exists' takes value 'true' or 'false'`, [path]);
    }
    const want = value === 'true';
    for (let i = 0; i < n; i++) mask[i] = valuesOf(i).length > 0 === want ? 1 : 0;
    return mask;
  }

  let test: (v: string) => boolean;
  let negate = false;
  if (op === 'regex') {
    const re = compileFilterRegex(value, where, path, regexLimits);
    const done = runSliced(
      n,
      (i) => {
        for (const v of valuesOf(i)) {
          if (re.matches(v)) {
            mask[i] = 1;
            return;
          }
        }
      },
      regexLimits.budgetMs,
      `Regex filters (here ${where.slice(0, 200)})`,
      path,
      regexSpent,
    );
    return done === undefined ? mask : done.then(() => mask);
  } else if (op === '=') {
    test = (v) => v === value;
  } else {
    const set = new Set(
      value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    );
    if (set.size === 0) throw invalid(`Filter ${where} has no value`, [path]);
    test = (v) => set.has(v);
    negate = op === 'not-in';
  }
  for (let i = 0; i < n; i++) {
    let hit = false;
    for (const v of valuesOf(i)) {
      if (test(v)) {
        hit = true;
        break;
      }
    }
    mask[i] = hit !== negate ? 1 : 0;
  }
  return mask;
}

const SNOMED_CT = 'http://snomed.info/sct';

/** The filters of the FHIR SNOMED CT page: `constraint` (alias `expression`) `=` an ECL expression, and `concept`
 * `in` a reference set id (its members: not the generic comma-separated list of codes). Undefined for the others. */
function snomedFilter(
  src: CodeSystemIndex,
  property: string,
  op: string,
  value: string,
  where: string,
  path: string,
): Uint8Array | Promise<Uint8Array> | undefined {
  if (property === 'constraint' || property === 'expression') {
    if (op !== '=') throw invalid(`Filter ${where}: '${property}' takes op '=' (an ECL expression)`, [path]);
    try {
      return eclMaskReady(src, value, path);
    } catch (err) {
      if (err instanceof TerminologyError) err.message = `Filter ${path}: ${err.message}`;
      throw err;
    }
  }
  if (property === 'concept' && op === 'in') {
    const refset = value.trim();
    if (!/^[0-9]{1,18}$/.test(refset))
      throw invalid(`Filter ${where}: for SNOMED CT, 'concept in' takes one reference set id`, [path]);
    return eclMaskReady(src, `^${refset}`, path);
  }
  return undefined;
}

/** A bad filter: the IG's `vs-invalid` issue type, located at the filter. */
function vsInvalid(message: string, path: string): TerminologyError {
  return withTxIssueType('vs-invalid', invalid(message, [path]));
}

function propertyGetter(src: CodeSystemIndex, property: string): (ord: number) => string[] {
  const codesOf = (list: Int32Array): string[] => Array.from(list, (o) => src.codes[o]);
  switch (property) {
    case 'concept':
    case 'code':
      return (o) => [src.codes[o]];
    case 'display':
      return (o) => (src.displays[o] !== undefined ? [src.displays[o]!] : []);
    case 'parent':
      return (o) => codesOf(src.parentsOf(o));
    case 'child':
      return (o) => codesOf(src.childrenOf(o));
    case 'status':
      return (o) => [src.statuses.get(o) ?? ((src.flags[o] & FLAG_INACTIVE) !== 0 ? 'inactive' : 'active')];
    case 'inactive':
      return (o) => [String((src.flags[o] & FLAG_INACTIVE) !== 0)];
    case 'notSelectable': {
      // The concept's own notSelectable value; one without it only when abstract (as the IG's tests read
      // `notSelectable = false`: concepts that say so, not those that say nothing).
      const notSelectable = src.propertyValueReader('notSelectable');
      return (o) => {
        const own = notSelectable(o);
        return own.length > 0 ? own : (src.flags[o] & FLAG_ABSTRACT) !== 0 ? ['true'] : [];
      };
    }
    default:
      return src.propertyValueReader(property);
  }
}
