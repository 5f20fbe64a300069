// $expand input, read with the parameter table (engine/parameters.ts): a query string, a Parameters body, GraphQL
// arguments. Here values only get their types: the text of an integer or a boolean becomes one, and a value of the
// wrong type, an unknown name or a malformed body is a 400 that names it. Their bounds (length, control characters,
// repeats, limits) are checked once, by the service before it looks anything up (engine checkRequest), whichever
// way the request came: REST and bots reach it through the GraphQL resolver, as GraphQL clients do.
import { parse, type DocumentNode } from 'graphql';
import { badRequest } from '../core/errors.js';
import {
  describeValue,
  EXPAND_PARAMETERS,
  IGNORED_PARAMETERS,
  PARAMETER_BY_KEY,
  PARAMETER_BY_NAME,
  parseLanguageList,
  type ExpandOptions,
  type ExpandParameterDefinition,
  type ExpandTargetParameters,
} from './engine/index.js';

/** Parameter values by key (ExpandOptions and ExpandTargetParameters together). */
export type ExpandVariables = Record<string, unknown>;

const INT_RE = /^\d{1,10}$/;

/** One value (as a Parameters entry or a query string gives it) as its parameter's type: a 400 naming the parameter
 * when it is not one. A resource is taken as it is (its shape is checked with the other values, by the service). */
function typed(p: ExpandParameterDefinition, v: unknown): unknown {
  switch (p.type) {
    case 'integer':
      if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
      if (typeof v === 'string' && INT_RE.test(v)) return Number(v);
      throw badRequest(`Parameter ${p.name} must be a non-negative integer, got ${describeValue(v)}`, [
        p.name,
      ]);
    case 'boolean':
      if (typeof v === 'boolean') return v;
      if (v === 'true' || v === 'false') return v === 'true';
      throw badRequest(`Parameter ${p.name} must be true or false, got ${describeValue(v)}`, [p.name]);
    case 'resource':
      // GraphQL reads a null as no value at all: it is refused here, where it is still a value.
      if (v === null) throw badRequest(`Parameter ${p.name} must be a resource`, [p.name]);
      return v;
    default:
      if (typeof v !== 'string') throw badRequest(`Parameter ${p.name} must be a string`, [p.name]);
      return v;
  }
}

/** Sets a typed value: a repeatable parameter collects (the service bounds how many), another may be given once. */
function put(vars: ExpandVariables, p: ExpandParameterDefinition, value: unknown): void {
  if (p.repeats) {
    const list = (vars[p.key] as unknown[] | undefined) ?? (vars[p.key] = [] as unknown[]);
    list.push(value);
    return;
  }
  if (vars[p.key] !== undefined) throw badRequest(`Parameter ${p.name} given more than once`, [p.name]);
  vars[p.key] = value;
}

function unknownParameters(names: string[]): never {
  throw badRequest(`Unknown or unsupported $expand parameter(s): ${names.join(', ')}`, names);
}

/** Variables from a query string (resource parameters are POST only). */
export function variablesFromQuery(
  query: Record<string, unknown>,
  vars: ExpandVariables = {},
): ExpandVariables {
  const unknown: string[] = [];
  for (const name in query) {
    if (IGNORED_PARAMETERS.has(name)) continue;
    const p = PARAMETER_BY_NAME.get(name);
    if (!p || p.type === 'resource') {
      if (p) throw badRequest(`Parameter ${name} can only be given in a POST Parameters body`, [name]);
      unknown.push(name);
      continue;
    }
    const raw = query[name];
    if (typeof raw === 'string') {
      put(vars, p, typed(p, raw));
      continue;
    }
    if (!Array.isArray(raw)) throw badRequest(`Parameter ${name} is malformed`, [name]);
    for (const v of raw) {
      if (typeof v !== 'string') throw badRequest(`Parameter ${name} is malformed`, [name]);
      put(vars, p, typed(p, v));
    }
  }
  if (unknown.length > 0) unknownParameters(unknown);
  return vars;
}

interface ParametersEntry {
  name?: unknown;
  resource?: unknown;
  [k: string]: unknown;
}

/** Variables from a Parameters resource (POST $expand). */
export function variablesFromParameters(body: unknown, vars: ExpandVariables = {}): ExpandVariables {
  if (body === undefined) return vars;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('The body of POST $expand must be a Parameters resource');
  const b = body as { resourceType?: unknown; parameter?: unknown };
  if (b.resourceType !== 'Parameters')
    throw badRequest(
      `The body of POST $expand must be a Parameters resource, got ${String(b.resourceType)}`,
      ['resourceType'],
    );
  if (b.parameter === undefined) return vars;
  if (!Array.isArray(b.parameter))
    throw badRequest('Parameters.parameter must be an array', ['Parameters.parameter']);
  const unknown: string[] = [];
  (b.parameter as ParametersEntry[]).forEach((prm, i) => {
    const where = `Parameters.parameter[${i}]`;
    if (!prm || typeof prm !== 'object' || typeof prm.name !== 'string')
      throw badRequest(`${where}.name is required`, [where]);
    const p = PARAMETER_BY_NAME.get(prm.name);
    if (!p) {
      if (!IGNORED_PARAMETERS.has(prm.name)) unknown.push(prm.name);
      return;
    }
    if (p.type === 'resource') {
      if (prm.resource === undefined)
        throw badRequest(`${where}: ${p.name} must be given as resource`, [where]);
      put(vars, p, typed(p, prm.resource));
      return;
    }
    const valueKeys = Object.keys(prm).filter((k) => k.startsWith('value'));
    if (valueKeys.length !== 1)
      throw badRequest(`${where} (${p.name}) must have exactly one value[x]`, [where]);
    put(vars, p, typed(p, prm[valueKeys[0]]));
  });
  if (unknown.length > 0) unknownParameters(unknown);
  return vars;
}

/** Splits GraphQL arguments (typed by the schema) into what to expand and how; the service checks their values. */
export function splitArguments(args: Record<string, unknown>): {
  target: ExpandTargetParameters;
  options: ExpandOptions;
} {
  const target: Record<string, unknown> = {};
  const options: Record<string, unknown> = {};
  // for-in, not Object.entries: the arguments object names every declared argument (most undefined), on the
  // path of every REST $expand.
  for (const key in args) {
    const raw = args[key];
    if (raw === null || raw === undefined) continue;
    const p = PARAMETER_BY_KEY.get(key);
    if (!p) continue; // `id` (instance $expand) is the only argument outside the table
    if (p.repeats && (raw as unknown[]).length === 0) continue;
    (p.target ? target : options)[key] = raw;
  }
  return { target: target as ExpandTargetParameters, options: options as ExpandOptions };
}

/** The GraphQL type of a parameter's argument. */
export function graphqlArgumentType(p: ExpandParameterDefinition): string {
  const scalar =
    p.type === 'integer'
      ? 'Int'
      : p.type === 'boolean'
        ? 'Boolean'
        : p.type === 'resource'
          ? 'JSON'
          : 'String';
  return p.repeats ? `[${scalar}!]` : scalar;
}

let restDocument: DocumentNode | undefined;

/** The expandValueSet query with every parameter of the table as a variable (and `id`), for the REST layer. */
export function expandDocument(): DocumentNode {
  if (!restDocument) {
    const params = [...EXPAND_PARAMETERS.map((p) => [p.key, graphqlArgumentType(p)]), ['id', 'String']];
    const defs = params.map(([k, t]) => `$${k}: ${t}`).join(', ');
    const uses = params.map(([k]) => `${k}: $${k}`).join(', ');
    restDocument = parse(`query RestExpand(${defs}) { expandValueSet(${uses}) }`);
  }
  return restDocument;
}

/** An Accept-Language header as a displayLanguage list: none for `*` alone (what fetch sends by default), or a
 * header that is too long or malformed (a header is not a parameter the client chose: it is ignored, not refused). */
export function acceptLanguageList(header: string | undefined): string | undefined {
  const value = header?.trim();
  if (!value || value.length > 200 || value === '*') return undefined;
  try {
    parseLanguageList(value, 'Accept-Language', false);
    return value;
  } catch {
    return undefined;
  }
}
