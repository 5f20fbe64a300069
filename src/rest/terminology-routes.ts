// FHIR ValueSet/$expand (type and instance level, GET and POST Parameters): translates the request into the
// expandValueSet GraphQL query, reading the parameters with the $expand parameter table
// (terminology/engine/parameters.ts). The terminology service does the work.
import type { IRouter, RequestHandler } from 'express';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { badRequest } from '../core/errors.js';
import type { Services } from '../services.js';
import { parseLanguageList } from '../terminology/engine/languages.js';
import { describeParameters } from '../terminology/engine/parameters.js';
import {
  expandDocument,
  variablesFromParameters,
  variablesFromQuery,
  type ExpandVariables,
} from '../terminology/expand-input.js';
import { runOperation } from './operation.js';
import { contextFor } from './request.js';
import { asyncHandler, requireAuth } from './middleware.js';
import { sendFhir } from './outcome.js';
import { declareOperation } from './capability.js';

/** The expandValueSet query with every $expand parameter as a variable (built from the parameter table). */
const ExpandDoc = expandDocument() as TypedDocumentNode<{ expandValueSet: unknown }, ExpandVariables>;

/** The filter rule, as documented in the CapabilityStatement. */
export const FILTER_RULE =
  'filter: text is lowercased and stripped of accents; words split on anything not a letter or digit. Every filter ' +
  'word must be the start of a word of the display (or of a designation); the whole filter also matches a code ' +
  'exactly. Ranking: exact code first, then displays starting with the whole filter, then the rest in the ' +
  "expansion's order. offset/count page the ranked list; count=0 returns only total. Unpaged expansions larger " +
  'than EXPAND_MAX_UNPAGED entries answer 422 too-costly.';

declareOperation({
  resourceType: 'ValueSet',
  name: 'expand',
  documentation: `${FILTER_RULE} Parameters: ${describeParameters()}.`,
});

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

/** Registers the ValueSet/$expand routes under the FHIR base. */
export const terminologyRoutes = (
  r: IRouter,
  base: string,
  _services: Services,
  jsonParser: RequestHandler,
): void => {
  const handle = (post: boolean): RequestHandler =>
    asyncHandler(async (req, res) => {
      const vars = variablesFromQuery(req.query as Record<string, unknown>);
      if (post) variablesFromParameters(req.body, vars);
      // Accept-Language asks for displays in that language, as displayLanguage does (the parameter wins).
      if (vars.displayLanguage === undefined) {
        const lang = acceptLanguageList(req.headers['accept-language']);
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
