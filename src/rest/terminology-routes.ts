// FHIR ValueSet/$expand (type and instance level, GET and POST Parameters): translates the request into the
// expandValueSet GraphQL query. Parameter parsing only; the terminology service does the work.
import type { IRouter, Request, RequestHandler } from 'express';
import { graphql } from '../generated/gql/index.js';
import { badRequest } from '../core/errors.js';
import type { HttpApi } from './api.js';
import { runOperation } from '../graphql/executor.js';
import { contextFor } from './request.js';
import { asyncHandler, requireAuth } from './middleware.js';
import { sendFhir } from './outcome.js';

const ExpandDoc = graphql(`
  query RestExpand(
    $url: String
    $valueSetVersion: String
    $id: String
    $valueSet: JSON
    $filter: String
    $offset: Int
    $count: Int
    $activeOnly: Boolean
    $includeDesignations: Boolean
    $displayLanguage: String
    $excludeNested: Boolean
    $excludeNotForUI: Boolean
    $systemVersion: [String!]
    $forceSystemVersion: [String!]
    $checkSystemVersion: [String!]
    $includeDefinition: Boolean
    $txResource: [JSON!]
  ) {
    expandValueSet(
      url: $url
      valueSetVersion: $valueSetVersion
      id: $id
      valueSet: $valueSet
      filter: $filter
      offset: $offset
      count: $count
      activeOnly: $activeOnly
      includeDesignations: $includeDesignations
      displayLanguage: $displayLanguage
      excludeNested: $excludeNested
      excludeNotForUI: $excludeNotForUI
      systemVersion: $systemVersion
      forceSystemVersion: $forceSystemVersion
      checkSystemVersion: $checkSystemVersion
      includeDefinition: $includeDefinition
      txResource: $txResource
    )
  }
`);

/** The filter rule, as documented in the CapabilityStatement. */
export const FILTER_RULE =
  'filter: text is lowercased and stripped of accents; words split on anything not a letter or digit. Every filter ' +
  'word must be the start of a word of the display (or of a designation); the whole filter also matches a code ' +
  'exactly. Ranking: exact code first, then displays starting with the whole filter, then the rest in the ' +
  "expansion's order. offset/count page the ranked list; count=0 returns only total. Unpaged expansions larger " +
  'than EXPAND_MAX_UNPAGED entries answer 422 too-costly.';

type Kind = 'string' | 'int' | 'bool' | 'list';
const PARAMS: Record<string, { key: string; kind: Kind }> = {
  url: { key: 'url', kind: 'string' },
  valueSetVersion: { key: 'valueSetVersion', kind: 'string' },
  filter: { key: 'filter', kind: 'string' },
  offset: { key: 'offset', kind: 'int' },
  count: { key: 'count', kind: 'int' },
  activeOnly: { key: 'activeOnly', kind: 'bool' },
  includeDesignations: { key: 'includeDesignations', kind: 'bool' },
  displayLanguage: { key: 'displayLanguage', kind: 'string' },
  excludeNested: { key: 'excludeNested', kind: 'bool' },
  excludeNotForUI: { key: 'excludeNotForUI', kind: 'bool' },
  'system-version': { key: 'systemVersion', kind: 'list' },
  'force-system-version': { key: 'forceSystemVersion', kind: 'list' },
  'check-system-version': { key: 'checkSystemVersion', kind: 'list' },
  includeDefinition: { key: 'includeDefinition', kind: 'bool' },
};
/** Accepted and ignored: formatting is always JSON here; `uuid` is the HL7 test runner's cache-buster (a
 * request id with no effect on the answer). */
const IGNORED = new Set(['_format', '_pretty', 'uuid']);
const INT_RE = /^\d{1,9}$/;

type Vars = Record<string, unknown>;

function setParam(vars: Vars, name: string, value: unknown): void {
  const p = PARAMS[name];
  if (p.kind === 'list') {
    ((vars[p.key] as string[] | undefined) ?? ((vars[p.key] = [] as string[]) as string[])).push(
      String(value),
    );
    return;
  }
  if (vars[p.key] !== undefined) throw badRequest(`Parameter ${name} given more than once`, [name]);
  vars[p.key] = value;
}

/** Variables from the query string; every value is checked here so a bad one is a 400 naming it. */
function fromQuery(query: Request['query'], vars: Vars): void {
  let unknown: string[] | undefined;
  for (const name in query) {
    if (IGNORED.has(name)) continue;
    const p = PARAMS[name];
    if (!p) {
      (unknown ??= []).push(name);
      continue;
    }
    const raw = query[name];
    const values = Array.isArray(raw) ? raw : [raw];
    for (const v of values) {
      if (typeof v !== 'string') throw badRequest(`Parameter ${name} is malformed`, [name]);
      setParam(vars, name, convert(name, p.kind, v));
    }
  }
  if (unknown)
    throw badRequest(`Unknown or unsupported $expand parameter(s): ${unknown.join(', ')}`, unknown);
}

function convert(name: string, kind: Kind, v: string): unknown {
  if (kind === 'int') {
    if (!INT_RE.test(v)) throw badRequest(`${name} must be a non-negative integer, got "${v}"`, [name]);
    return Number(v);
  }
  if (kind === 'bool') {
    if (v === 'true') return true;
    if (v === 'false') return false;
    throw badRequest(`${name} must be true or false, got "${v}"`, [name]);
  }
  return v;
}

interface ParametersParam {
  name?: unknown;
  resource?: unknown;
  [k: string]: unknown;
}

/** Variables from a Parameters resource (POST). */
function fromParameters(body: unknown, vars: Vars): void {
  if (body === undefined) return;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('The body of POST $expand must be a Parameters resource');
  const b = body as { resourceType?: unknown; parameter?: unknown };
  if (b.resourceType !== 'Parameters')
    throw badRequest(
      `The body of POST $expand must be a Parameters resource, got ${String(b.resourceType)}`,
      ['resourceType'],
    );
  if (b.parameter === undefined) return;
  if (!Array.isArray(b.parameter))
    throw badRequest('Parameters.parameter must be an array', ['Parameters.parameter']);
  const unknown: string[] = [];
  (b.parameter as ParametersParam[]).forEach((prm, i) => {
    const where = `Parameters.parameter[${i}]`;
    if (!prm || typeof prm.name !== 'string') throw badRequest(`${where}.name is required`, [where]);
    const name = prm.name;
    if (name === 'valueSet') {
      if (prm.resource === undefined)
        throw badRequest(`${where}: valueSet must be given as resource`, [where]);
      if (vars.valueSet !== undefined) throw badRequest('Parameter valueSet given more than once', [where]);
      vars.valueSet = prm.resource;
      return;
    }
    if (name === 'tx-resource') {
      if (prm.resource === undefined)
        throw badRequest(`${where}: tx-resource must be given as resource`, [where]);
      ((vars.txResource as unknown[] | undefined) ?? ((vars.txResource = []) as unknown[])).push(
        prm.resource,
      );
      return;
    }
    const p = PARAMS[name];
    if (!p) {
      if (!IGNORED.has(name)) unknown.push(name);
      return;
    }
    const valueKeys = Object.keys(prm).filter((k) => k.startsWith('value'));
    if (valueKeys.length !== 1)
      throw badRequest(`${where} (${name}) must have exactly one value[x]`, [where]);
    const v = prm[valueKeys[0]];
    if (p.kind === 'int') {
      if (typeof v === 'number' && Number.isInteger(v) && v >= 0) setParam(vars, name, v);
      else if (typeof v === 'string') setParam(vars, name, convert(name, 'int', v));
      else throw badRequest(`${name} must be a non-negative integer`, [where]);
    } else if (p.kind === 'bool') {
      if (typeof v === 'boolean') setParam(vars, name, v);
      else if (typeof v === 'string') setParam(vars, name, convert(name, 'bool', v));
      else throw badRequest(`${name} must be a boolean`, [where]);
    } else {
      if (typeof v !== 'string') throw badRequest(`${name} must be a string`, [where]);
      setParam(vars, name, v);
    }
  });
  if (unknown.length > 0)
    throw badRequest(`Unknown or unsupported $expand parameter(s): ${unknown.join(', ')}`, unknown);
}

/** The language tag an Accept-Language header prefers most (highest q, first on ties); none for `*` only (what
 * fetch sends by default) or a malformed header. */
export function preferredLanguage(header: string | undefined): string | undefined {
  if (!header || header.length > 200) return undefined;
  let best: string | undefined;
  let bestQ = 0;
  for (const part of header.split(',')) {
    const [tag, ...params] = part.trim().split(';');
    if (!/^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(tag)) continue;
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qp ? Number(qp.slice(2)) : 1;
    if (Number.isFinite(q) && q > bestQ) {
      best = tag;
      bestQ = q;
    }
  }
  return best;
}

/** Registers the ValueSet/$expand routes under the FHIR base. */
export const terminologyRoutes = (
  r: IRouter,
  base: string,
  _api: HttpApi,
  jsonParser: RequestHandler,
): void => {
  const handle = (post: boolean): RequestHandler =>
    asyncHandler(async (req, res) => {
      const vars: Vars = {};
      fromQuery(req.query, vars);
      if (post) fromParameters(req.body, vars);
      // Accept-Language asks for displays in that language, as displayLanguage does (the parameter wins).
      if (vars.displayLanguage === undefined) {
        const lang = preferredLanguage(req.headers['accept-language']);
        if (lang) vars.displayLanguage = lang;
      }
      const id = req.params.id;
      if (id !== undefined) {
        if (vars.url !== undefined || vars.valueSet !== undefined)
          throw badRequest('Instance $expand takes no url or valueSet parameter', ['url']);
        vars.id = String(id);
      }
      const data = await runOperation(ExpandDoc, vars, contextFor(req));
      sendFhir(res, 200, data.expandValueSet);
    });
  r.get(`${base}/ValueSet/\\$expand`, requireAuth, handle(false));
  r.post(`${base}/ValueSet/\\$expand`, requireAuth, jsonParser, handle(true));
  r.get(`${base}/ValueSet/:id/\\$expand`, requireAuth, handle(false));
  r.post(`${base}/ValueSet/:id/\\$expand`, requireAuth, jsonParser, handle(true));
};
