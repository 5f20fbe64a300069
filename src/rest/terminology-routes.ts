// FHIR ValueSet/$expand (type and instance level, GET and POST Parameters): translates the request into the
// expandValueSet GraphQL query. The parameters are read with the terminology feature's $expand parameter table,
// which the app hands in (ExpandInput): the HTTP layer imports no feature. The terminology service does the work.
import type { IRouter, RequestHandler } from 'express';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { badRequest } from '../core/errors.js';
import { runOperation } from '../graphql/executor.js';
import type { FeatureRoutes } from './app.js';
import type { HttpApi } from './api.js';
import { contextFor } from './request.js';
import { asyncHandler, requireAuth } from './middleware.js';
import { sendFhir } from './outcome.js';

/** Parameter values by GraphQL variable name. */
type ExpandVariables = Record<string, unknown>;

/** The $expand input as the terminology feature reads it (its parameter table). */
export interface ExpandInput {
  /** The expandValueSet query with every $expand parameter as a variable. */
  document: TypedDocumentNode<{ expandValueSet: unknown }, ExpandVariables>;
  /** Variables from a query string; a bad value is a 400 naming it. */
  fromQuery(query: Record<string, unknown>): ExpandVariables;
  /** Adds the variables of a Parameters body. */
  fromParameters(body: unknown, vars: ExpandVariables): ExpandVariables;
  /** An Accept-Language header as a displayLanguage value; undefined when it is to be ignored. */
  acceptLanguage(header: string | undefined): string | undefined;
}

/** The filter rule, as documented in the CapabilityStatement. */
export const FILTER_RULE =
  'filter: text is lowercased and stripped of accents; words split on anything not a letter or digit. Every filter ' +
  'word must be the start of a word of the display (or of a designation); the whole filter also matches a code ' +
  'exactly. Ranking: exact code first, then displays starting with the whole filter, then the rest in the ' +
  "expansion's order. offset/count page the ranked list; count=0 returns only total. Unpaged expansions larger " +
  'than EXPAND_MAX_UNPAGED entries answer 422 too-costly.';

/** The ValueSet/$expand routes under the FHIR base, reading parameters with `input`. */
export function terminologyRoutes(input: ExpandInput): FeatureRoutes {
  return (r: IRouter, base: string, _api: HttpApi, jsonParser: RequestHandler): void => {
    const handle = (post: boolean): RequestHandler =>
      asyncHandler(async (req, res) => {
        const vars = input.fromQuery(req.query as Record<string, unknown>);
        if (post) input.fromParameters(req.body, vars);
        // Accept-Language asks for displays in that language, as displayLanguage does (the parameter wins).
        if (vars.displayLanguage === undefined) {
          const lang = input.acceptLanguage(req.headers['accept-language']);
          if (lang) vars.displayLanguage = lang;
        }
        const id = req.params.id;
        if (id !== undefined) {
          if (vars.url !== undefined || vars.valueSet !== undefined)
            throw badRequest('Instance $expand takes no url or valueSet parameter', ['url']);
          vars.id = String(id);
        }
        const data = await runOperation(input.document, vars, contextFor(req));
        sendFhir(res, 200, data.expandValueSet);
      });
    r.get(`${base}/ValueSet/\\$expand`, requireAuth, handle(false));
    r.post(`${base}/ValueSet/\\$expand`, requireAuth, jsonParser, handle(true));
    r.get(`${base}/ValueSet/:id/\\$expand`, requireAuth, handle(false));
    r.post(`${base}/ValueSet/:id/\\$expand`, requireAuth, jsonParser, handle(true));
  };
}
