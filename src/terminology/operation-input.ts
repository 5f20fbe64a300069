// Operation input ($expand, $lookup, $subsumes, $validate-code), read with the operation's parameter table
// (engine/parameters.ts): a query string, a Parameters body, GraphQL arguments. Here values only get their types:
// the text of an integer or a boolean becomes one, and a value of the wrong type, an unknown name or a malformed
// body is a 400 that names it. Their bounds (length, control characters, repeats, limits) are checked once, by the
// service before it looks anything up (engine checkRequest / checkOperationValues), whichever way the request
// came: REST and bots reach it through the GraphQL resolver, as GraphQL clients do.
import { parse, type DocumentNode } from 'graphql';
import { badRequest } from '../core/errors.js';
import {
  describeValue,
  EXPAND_OPERATION,
  IGNORED_PARAMETERS,
  parseLanguageList,
  type OperationDeclaration,
  type ParameterDefinition,
} from './engine/index.js';

/** Parameter values by key. */
export type OperationVariables = Record<string, unknown>;
/** $expand's variables (ExpandOptions and ExpandTargetParameters together). */
export type ExpandVariables = OperationVariables;

const INT_RE = /^\d{1,10}$/;

/** The FHIR type of a complex parameter, and the `value[x]` element a Parameters entry carries it in. */
const COMPLEX_TYPE = { resource: 'resource', coding: 'Coding', codeableConcept: 'CodeableConcept' } as const;

/** One value (as a Parameters entry or a query string gives it) as its parameter's type: a 400 naming the parameter
 * when it is not one. A resource or a Coding is taken as it is (its shape is checked with the other values, by the
 * service). */
function typed(p: ParameterDefinition, v: unknown): unknown {
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
    case 'coding':
    case 'codeableConcept':
      // GraphQL reads a null as no value at all: it is refused here, where it is still a value.
      if (v === null) throw badRequest(`Parameter ${p.name} must be a ${COMPLEX_TYPE[p.type]}`, [p.name]);
      return v;
    default:
      if (typeof v !== 'string') throw badRequest(`Parameter ${p.name} must be a string`, [p.name]);
      return v;
  }
}

/** Sets a typed value: a repeatable parameter collects (the service bounds how many), another may be given once. */
function put(vars: OperationVariables, p: ParameterDefinition, value: unknown): void {
  if (p.repeats) {
    const list = (vars[p.key] as unknown[] | undefined) ?? (vars[p.key] = [] as unknown[]);
    list.push(value);
    return;
  }
  if (vars[p.key] !== undefined) throw badRequest(`Parameter ${p.name} given more than once`, [p.name]);
  vars[p.key] = value;
}

function unknownParameters(op: OperationDeclaration, names: string[]): never {
  throw badRequest(`Unknown or unsupported $${op.code} parameter(s): ${names.join(', ')}`, names);
}

/** Parameters given only in a POST body: resources, Codings and CodeableConcepts (a query string has no way to
 * write one). */
const postOnly = (p: ParameterDefinition): boolean =>
  p.type === 'resource' || p.type === 'coding' || p.type === 'codeableConcept';

/** Variables from a query string (resource and Coding parameters are POST only). */
export function variablesFromQuery(
  query: Record<string, unknown>,
  vars: OperationVariables = {},
  op: OperationDeclaration = EXPAND_OPERATION,
): OperationVariables {
  const unknown: string[] = [];
  for (const name in query) {
    if (IGNORED_PARAMETERS.has(name)) continue;
    const p = op.byName.get(name);
    if (!p || postOnly(p)) {
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
  if (unknown.length > 0) unknownParameters(op, unknown);
  return vars;
}

interface ParametersEntry {
  name?: unknown;
  resource?: unknown;
  [k: string]: unknown;
}

/** Variables from a Parameters resource (the body of a POST). */
export function variablesFromParameters(
  body: unknown,
  vars: OperationVariables = {},
  op: OperationDeclaration = EXPAND_OPERATION,
): OperationVariables {
  if (body === undefined) return vars;
  const what = `The body of POST $${op.code}`;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest(`${what} must be a Parameters resource`);
  const b = body as { resourceType?: unknown; parameter?: unknown };
  if (b.resourceType !== 'Parameters')
    throw badRequest(`${what} must be a Parameters resource, got ${String(b.resourceType)}`, [
      'resourceType',
    ]);
  if (b.parameter === undefined) return vars;
  if (!Array.isArray(b.parameter))
    throw badRequest('Parameters.parameter must be an array', ['Parameters.parameter']);
  const unknown: string[] = [];
  (b.parameter as ParametersEntry[]).forEach((prm, i) => {
    const where = `Parameters.parameter[${i}]`;
    if (!prm || typeof prm !== 'object' || typeof prm.name !== 'string')
      throw badRequest(`${where}.name is required`, [where]);
    const p = op.byName.get(prm.name);
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
    if (p.type === 'coding' || p.type === 'codeableConcept') {
      const element = `value${COMPLEX_TYPE[p.type]}`;
      if (prm[element] === undefined)
        throw badRequest(`${where}: ${p.name} must be given as ${element}`, [where]);
      put(vars, p, typed(p, prm[element]));
      return;
    }
    const valueKeys = Object.keys(prm).filter((k) => k.startsWith('value'));
    if (valueKeys.length !== 1)
      throw badRequest(`${where} (${p.name}) must have exactly one value[x]`, [where]);
    put(vars, p, typed(p, prm[valueKeys[0]]));
  });
  if (unknown.length > 0) unknownParameters(op, unknown);
  return vars;
}

/** Splits GraphQL arguments (typed by the schema) into what the operation works on (the `target` parameters) and
 * how; the service checks their values. Arguments outside the table (`id`) are left out. */
export function splitArguments(
  args: Record<string, unknown>,
  op: OperationDeclaration = EXPAND_OPERATION,
): { target: Record<string, unknown>; options: Record<string, unknown> } {
  const target: Record<string, unknown> = {};
  const options: Record<string, unknown> = {};
  // for-in, not Object.entries: the arguments object names every declared argument (most undefined), on the
  // path of every REST request.
  for (const key in args) {
    const raw = args[key];
    if (raw === null || raw === undefined) continue;
    const p = op.byKey.get(key);
    if (!p) continue; // `id` (instance level) is the only argument outside the table
    if (p.repeats && (raw as unknown[]).length === 0) continue;
    (p.target ? target : options)[key] = raw;
  }
  return { target, options };
}

/** The GraphQL type of a parameter's argument. */
export function graphqlArgumentType(p: ParameterDefinition): string {
  const scalar =
    p.type === 'integer'
      ? 'Int'
      : p.type === 'boolean'
        ? 'Boolean'
        : p.type === 'resource' || p.type === 'coding' || p.type === 'codeableConcept'
          ? 'JSON'
          : 'String';
  return p.repeats ? `[${scalar}!]` : scalar;
}

const restDocuments = new Map<OperationDeclaration, DocumentNode>();

/** The operation's query with every parameter of its table as a variable (and `id`), for the REST layer. */
export function operationDocument(op: OperationDeclaration): DocumentNode {
  let doc = restDocuments.get(op);
  if (!doc) {
    const params = [...op.parameters.map((p) => [p.key, graphqlArgumentType(p)]), ['id', 'String']];
    const defs = params.map(([k, t]) => `$${k}: ${t}`).join(', ');
    const uses = params.map(([k]) => `${k}: $${k}`).join(', ');
    // Named for the field: two operations share a code ($validate-code), and a GraphQL name has no '-'.
    const name = `Rest${op.graphqlField[0].toUpperCase()}${op.graphqlField.slice(1)}`;
    doc = parse(`query ${name}(${defs}) { ${op.graphqlField}(${uses}) }`);
    restDocuments.set(op, doc);
  }
  return doc;
}

/** The expandValueSet query with every parameter of the table as a variable (and `id`), for the REST layer. */
export function expandDocument(): DocumentNode {
  return operationDocument(EXPAND_OPERATION);
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
