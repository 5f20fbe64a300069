// FHIR ValueSet/$expand (type and instance level, GET and POST Parameters): translates the request into the
// expandValueSet GraphQL query, reading the parameters with the $expand parameter table (expand-input.ts). The
// terminology service does the work.
import type { IRouter, RequestHandler } from 'express';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { badRequest } from '../core/errors.js';
import { runOperation } from '../graphql/executor.js';
import type { FeatureRoutes } from '../rest/app.js';
import type { HttpApi } from '../rest/api.js';
import { contextFor } from '../rest/request.js';
import { asyncHandler, requireAuth } from '../rest/middleware.js';
import { sendFhir } from '../rest/outcome.js';
import {
  acceptLanguageList,
  expandDocument,
  variablesFromParameters,
  variablesFromQuery,
  type ExpandVariables,
} from './expand-input.js';

/** The expandValueSet query with every $expand parameter as a variable (built from the parameter table). */
const restExpand = () => expandDocument() as TypedDocumentNode<{ expandValueSet: unknown }, ExpandVariables>;

/** The filter rule, as documented in the CapabilityStatement. */
export const FILTER_RULE =
  'filter: text is lowercased and stripped of accents; words split on anything not a letter or digit. Every filter ' +
  'word must be the start of a word of the display (or of a designation); the whole filter also matches a code ' +
  'exactly. Ranking: exact code first, then displays starting with the whole filter, then the rest in the ' +
  "expansion's order. offset/count page the ranked list; count=0 returns only total. Unpaged expansions larger " +
  'than EXPAND_MAX_UNPAGED entries answer 422 too-costly.';

/** Registers the ValueSet/$expand routes under the FHIR base. */
export const terminologyRoutes: FeatureRoutes = (
  r: IRouter,
  base: string,
  _api: HttpApi,
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
      // The HL7 test suite's way to ask for a lower limit (tooCostlyThreshold; the parameter wins).
      const threshold = req.headers['x-too-costly-threshold'];
      if (vars.tooCostlyThreshold === undefined && typeof threshold === 'string') {
        if (!/^\d{1,10}$/.test(threshold.trim()))
          throw badRequest(
            `X-TOO-COSTLY-THRESHOLD must be a non-negative integer, got "${threshold.slice(0, 40)}"`,
          );
        vars.tooCostlyThreshold = Number(threshold.trim());
      }
      const id = req.params.id;
      if (id !== undefined) {
        if (vars.url !== undefined || vars.valueSet !== undefined)
          throw badRequest('Instance $expand takes no url or valueSet parameter', ['url']);
        vars.id = String(id);
      }
      const data = await runOperation(restExpand(), vars, contextFor(req));
      sendFhir(res, 200, data.expandValueSet);
    });
  r.get(`${base}/ValueSet/\\$expand`, requireAuth, handle(false));
  r.post(`${base}/ValueSet/\\$expand`, requireAuth, jsonParser, handle(true));
  r.get(`${base}/ValueSet/:id/\\$expand`, requireAuth, handle(false));
  r.post(`${base}/ValueSet/:id/\\$expand`, requireAuth, jsonParser, handle(true));
};
