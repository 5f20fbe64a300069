// Every operation parameter value is checked here, once (a 400 that names the parameter): against its definition
// in the operation's parameter table (string length, control characters, repeats, non-negative integers, codings,
// resources) and, for $expand, the configured limits (EXPAND_MAX_COUNT, EXPAND_FILTER_MAX_CHARS, EXPAND_FILTER_MAX_WORDS). The edges only give values
// their types (REST parses query text; GraphQL's schema types arguments), and the terminology service checks a
// request before it looks anything up, whichever edge it came through (REST, GraphQL, a bot).
import { invalid } from './errors.js';
import {
  MAX_REPEATS,
  MAX_STRING,
  PARAMETER_BY_KEY,
  type OperationDeclaration,
  type ParameterDefinition,
} from './parameters.js';
import { prepareFilter, type PreparedFilter } from './ranking.js';
import { DEFAULT_EXPAND_LIMITS, MAX_OFFSET, type ExpandLimits, type ExpandRequest } from './types.js';

/** A request whose every value checkRequest has checked (its only maker): the engine expands it as it is. */
export interface CheckedRequest {
  readonly request: ExpandRequest;
  /** The request's filter, normalised (counting its words is part of the check); undefined when none or blank. */
  readonly filter: PreparedFilter | undefined;
}

/** Control characters other than tab, newline and carriage return have no place in a parameter value. */
// eslint-disable-next-line no-control-regex -- this is the check for them
const CONTROL_RE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** Checks every value of a request against its definition and the limits: a 400 for the first bad one. */
export function checkRequest(request: ExpandRequest, limits: ExpandLimits): CheckedRequest {
  if (!(limits.maxUnpaged >= 0)) throw new Error('limits.maxUnpaged must be a non-negative number');
  // for-in: a request names the parameters given, in the order they came.
  for (const key in request) {
    const value = (request as Record<string, unknown>)[key];
    const p = PARAMETER_BY_KEY.get(key);
    if (p && value !== undefined && value !== null) checkValue(p, value);
  }
  const { count, offset, filter } = request;
  const maxCount = limits.maxCount ?? DEFAULT_EXPAND_LIMITS.maxCount;
  if (count !== undefined && count > maxCount) {
    throw invalid(
      `Parameter count is ${count}, more than the limit of ${maxCount} (EXPAND_MAX_COUNT): page with offset`,
      ['count'],
    );
  }
  if (offset !== undefined && offset > MAX_OFFSET) {
    throw invalid(`Parameter offset is ${offset}, more than the limit of ${MAX_OFFSET}`, ['offset']);
  }
  const maxLen = limits.maxFilterLength ?? DEFAULT_EXPAND_LIMITS.maxFilterLength;
  if (filter !== undefined && filter.length > maxLen) {
    throw invalid(
      `Parameter filter is ${filter.length} characters long, more than the limit of ${maxLen} ` +
        `(EXPAND_FILTER_MAX_CHARS)`,
      ['filter'],
    );
  }
  return { request, filter: prepareFilter(filter, limits) };
}

/** Checks every value of an operation's request (by key; keys outside its table are not checked here): a 400 for
 * the first bad one. */
export function checkOperationValues(
  op: OperationDeclaration,
  values: Readonly<Record<string, unknown>>,
): void {
  for (const key in values) {
    const value = values[key];
    const p = op.byKey.get(key);
    if (p && value !== undefined && value !== null) checkValue(p, value);
  }
}

/** Checks the value of one $expand parameter, by key, outside a request (the target: url, valueSet, txResource). */
export function checkParameter(key: string, value: unknown): void {
  const p = PARAMETER_BY_KEY.get(key);
  if (!p) throw new Error(`No $expand parameter has the key ${key}`);
  if (value !== undefined && value !== null) checkValue(p, value);
}

/** Checks one value (a list, for a repeatable parameter) against its definition. */
function checkValue(p: ParameterDefinition, value: unknown): void {
  if (!p.repeats) return checkOne(p, value);
  const list = value as readonly unknown[];
  for (let i = 0; i < list.length; i++) {
    checkOne(p, list[i]);
    // Named as the values come: a bad value before the one too many is named first. tx-resource has a bound of its
    // own, in the service.
    if (i === MAX_REPEATS && p.type !== 'resource')
      throw invalid(`Parameter ${p.name} is given more than ${MAX_REPEATS} times`, [p.name]);
  }
}

/** The elements of a Coding a `coding` parameter may carry (each a bounded string). */
const CODING_ELEMENTS: ReadonlySet<string> = new Set([
  'system',
  'version',
  'code',
  'display',
  'userSelected',
]);

/** A Coding: an object of bounded strings (and userSelected). */
function checkCoding(p: ParameterDefinition, v: unknown, label: string): void {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw invalid(`Parameter ${label} must be a Coding`, [p.name]);
  for (const [k, x] of Object.entries(v)) {
    if (!CODING_ELEMENTS.has(k))
      throw invalid(`Parameter ${label}: a Coding has no element ${describeValue(k)}`, [p.name]);
    if (k === 'userSelected') {
      if (typeof x !== 'boolean')
        throw invalid(`Parameter ${label}.userSelected must be a boolean`, [p.name]);
      continue;
    }
    if (typeof x !== 'string') throw invalid(`Parameter ${label}.${k} must be a string`, [p.name]);
    checkString(p, x, `${label}.${k}`);
  }
}

function checkOne(p: ParameterDefinition, v: unknown): void {
  switch (p.type) {
    case 'coding':
      return checkCoding(p, v, p.name);
    case 'codeableConcept': {
      if (typeof v !== 'object' || v === null || Array.isArray(v))
        throw invalid(`Parameter ${p.name} must be a CodeableConcept`, [p.name]);
      for (const [k, x] of Object.entries(v)) {
        if (k === 'text') {
          if (typeof x !== 'string') throw invalid(`Parameter ${p.name}.text must be a string`, [p.name]);
          checkString(p, x, `${p.name}.text`);
        } else if (k === 'coding') {
          if (!Array.isArray(x)) throw invalid(`Parameter ${p.name}.coding must be an array`, [p.name]);
          // Checked up to one past the limit: the count is refused before a huge list is walked.
          for (let i = 0; i < x.length && i <= MAX_REPEATS; i++) {
            if (i === MAX_REPEATS)
              throw invalid(`Parameter ${p.name} has more than ${MAX_REPEATS} codings`, [p.name]);
            checkCoding(p, x[i], `${p.name}.coding[${i}]`);
          }
        } else {
          throw invalid(`Parameter ${p.name}: a CodeableConcept has no element ${describeValue(k)}`, [
            p.name,
          ]);
        }
      }
      return;
    }
    case 'integer':
      if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return;
      throw invalid(`Parameter ${p.name} must be a non-negative integer, got ${describeValue(v)}`, [p.name]);
    case 'boolean':
      return; // typed by the edges
    case 'resource':
      if (typeof v !== 'object' || v === null || Array.isArray(v))
        throw invalid(`Parameter ${p.name} must be a resource`, [p.name]);
      return;
    default:
      checkString(p, v as string, p.name);
  }
}

/** A string value: at most the parameter's length, no control characters. */
function checkString(p: ParameterDefinition, s: string, label: string): void {
  const max = p.maxLength ?? MAX_STRING;
  if (s.length > max)
    throw invalid(`Parameter ${label} is ${s.length} characters long, more than the limit of ${max}`, [
      p.name,
    ]);
  if (CONTROL_RE.test(s)) throw invalid(`Parameter ${label} contains control characters`, [p.name]);
}

/** A value as a 400 message quotes it: strings in quotes, anything else as JSON, at most 60 characters. */
export function describeValue(v: unknown): string {
  const s = typeof v === 'string' ? `"${v}"` : JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 60)}...` : s;
}
