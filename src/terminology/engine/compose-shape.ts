// The shape of a ValueSet's compose (FHIR R4 ValueSet.compose), checked before it is evaluated: the evaluator reads
// include/exclude entries, their concepts, filters and valueSet references as the types the definition gives them,
// and an inline value set with `include.valueSet: [5]`, `include.concept: [null]` or `exclude: "x"` reached it as
// a TypeError (a 500). Stored value sets are checked on write; this covers inline and tx-resource ones too, and
// stored ones written before the check existed.
import { invalid } from './errors.js';
import type { ValueSetCompose } from './types.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a value is, for a message ("a number", "null"). */
function kind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

function fail(path: string, expected: string, v: unknown): never {
  throw invalid(`${path} must be ${expected}, got ${kind(v)}`, [path]);
}

function optionalString(o: Json, key: string, path: string): void {
  const v = o[key];
  if (v !== undefined && typeof v !== 'string') fail(`${path}.${key}`, 'a string', v);
}

/** The array at `o[key]` (or none), failing on anything else. */
function optionalArray(o: Json, key: string, path: string): unknown[] {
  const v = o[key];
  if (v === undefined) return [];
  if (!Array.isArray(v)) fail(`${path}.${key}`, 'an array', v);
  return v;
}

function checkClause(clause: unknown, path: string): void {
  if (!isObject(clause)) fail(path, 'an object', clause);
  optionalString(clause, 'system', path);
  optionalString(clause, 'version', path);
  for (const [i, url] of optionalArray(clause, 'valueSet', path).entries())
    if (typeof url !== 'string') fail(`${path}.valueSet[${i}]`, 'a string (a canonical url)', url);
  for (const [i, c] of optionalArray(clause, 'concept', path).entries()) {
    const at = `${path}.concept[${i}]`;
    if (!isObject(c)) fail(at, 'an object', c);
    if (typeof c.code !== 'string') fail(`${at}.code`, 'a string', c.code);
    optionalString(c, 'display', at);
    for (const [k, d] of optionalArray(c, 'designation', at).entries()) {
      if (!isObject(d)) fail(`${at}.designation[${k}]`, 'an object', d);
      optionalString(d, 'value', `${at}.designation[${k}]`);
      optionalString(d, 'language', `${at}.designation[${k}]`);
    }
  }
  for (const [i, f] of optionalArray(clause, 'filter', path).entries()) {
    const at = `${path}.filter[${i}]`;
    if (!isObject(f)) fail(at, 'an object', f);
    for (const key of ['property', 'op', 'value']) optionalString(f, key, at);
  }
}

/** 400 naming the element when a compose is not shaped as FHIR R4 defines it (the parts the evaluator reads). */
export function checkComposeShape(
  compose: unknown,
  path = 'ValueSet.compose',
): asserts compose is ValueSetCompose {
  if (!isObject(compose)) fail(path, 'an object', compose);
  if (compose.inactive !== undefined && typeof compose.inactive !== 'boolean')
    fail(`${path}.inactive`, 'true or false', compose.inactive);
  optionalString(compose, 'lockedDate', path);
  for (const key of ['include', 'exclude'])
    for (const [i, clause] of optionalArray(compose, key, path).entries())
      checkClause(clause, `${path}.${key}[${i}]`);
}
