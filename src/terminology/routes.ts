// The FHIR terminology operations over REST: ValueSet/$expand, CodeSystem/$lookup, CodeSystem/$subsumes,
// ValueSet/$validate-code and CodeSystem/$validate-code (type and instance level, GET and POST Parameters). Each request is read with its operation's parameter table
// (operation-input.ts) into the variables of the operation's GraphQL query, which the terminology service answers.
import type { IRouter, Request, RequestHandler } from 'express';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { badRequest } from '../core/errors.js';
import { runOperation } from '../graphql/executor.js';
import { graphql } from '../generated/gql/index.js';
import type { FeatureRoutes } from '../rest/app.js';
import type { HttpApi } from '../rest/api.js';
import { contextFor } from '../rest/request.js';
import { asyncHandler, requireAuth } from '../rest/middleware.js';
import { fhirBytes, sendBytes, sendFhir } from '../rest/outcome.js';
import { EXPAND_OPERATION, TERMINOLOGY_OPERATIONS, type OperationDeclaration } from './engine/index.js';
import { AnswerCache } from './answer-cache.js';
import { batchValidateRoutes } from './batch-routes.js';
import type { TerminologyService } from './service.js';
import {
  acceptLanguageList,
  operationDocument,
  variablesFromParameters,
  variablesFromQuery,
  type OperationVariables,
} from './operation-input.js';

/** The operation's query with every parameter as a variable (built from its table). */
const restDocument = (op: OperationDeclaration) =>
  operationDocument(op) as TypedDocumentNode<Record<string, unknown>, OperationVariables>;

const TerminologyCapabilitiesDoc = graphql(`
  query RestTerminologyCapabilities {
    terminologyCapabilities
  }
`);

/** The filter rule, as documented in the CapabilityStatement. */
export const FILTER_RULE =
  'filter: text is lowercased and stripped of accents; words split on anything not a letter or digit. Every filter ' +
  'word must be the start of a word of the display (or of a designation); the whole filter also matches a code ' +
  'exactly, and the start of codes when it is one token of 2+ characters with a digit (4046 finds 404684003). ' +
  'Ranking: exact code first, then those codes in code order, then displays starting with the whole filter, then the rest in the ' +
  "expansion's order. offset/count page the ranked list; count=0 returns only total. Unpaged expansions larger " +
  'than EXPAND_MAX_UNPAGED entries answer 422 too-costly.';

/** What only $expand reads from the request beyond its parameters: the test suite's X-TOO-COSTLY-THRESHOLD
 * header, and that instance $expand takes no url or valueSet. */
function expandExtras(
  vars: OperationVariables,
  headers: Record<string, unknown>,
  id: string | undefined,
): void {
  // The HL7 test suite's way to ask for a lower limit (tooCostlyThreshold; the parameter wins).
  const threshold = headers['x-too-costly-threshold'];
  if (vars.tooCostlyThreshold === undefined && typeof threshold === 'string') {
    if (!/^\d{1,10}$/.test(threshold.trim()))
      throw badRequest(
        `X-TOO-COSTLY-THRESHOLD must be a non-negative integer, got "${threshold.slice(0, 40)}"`,
      );
    vars.tooCostlyThreshold = Number(threshold.trim());
  }
  if (id !== undefined && (vars.url !== undefined || vars.valueSet !== undefined))
    throw badRequest('Instance $expand takes no url or valueSet parameter', ['url']);
}

/** Registers the terminology operation routes under the FHIR base; identical requests are answered from the
 * service's answer cache while its terminology is unchanged (answer-cache.ts). */
export const terminologyRoutes =
  (service: TerminologyService): FeatureRoutes =>
  (r: IRouter, base: string, api: HttpApi, jsonParser: RequestHandler): void => {
    batchValidateRoutes(r, base, jsonParser, api.config.terminologyBatchMax);
    const answers = new AnswerCache();
    const handle = (op: OperationDeclaration, post: boolean): RequestHandler =>
      asyncHandler(async (req, res) => {
        const generation = service.answerGeneration();
        const key = answers.keyOf(req, generation);
        const kept = key === undefined ? undefined : answers.get(key);
        if (kept) return sendBytes(res, 200, kept);
        const bytes = fhirBytes(await answer(op, post, req));
        // Kept only when no change came while it was computed.
        if (key !== undefined && service.answerGeneration() === generation) answers.set(key, bytes);
        sendBytes(res, 200, bytes);
      });
    /** The operation's answer to a request (its parameters from the query and, for POST, the body). */
    const answer = async (op: OperationDeclaration, post: boolean, req: Request): Promise<unknown> => {
      const vars = variablesFromQuery(req.query as Record<string, unknown>, {}, op);
      if (post) variablesFromParameters(req.body, vars, op);
      // Accept-Language asks for displays in that language, as displayLanguage does (the parameter wins).
      if (op.byKey.has('displayLanguage') && vars.displayLanguage === undefined) {
        const lang = acceptLanguageList(req.headers['accept-language']);
        if (lang) vars.displayLanguage = lang;
      }
      const id = req.params.id === undefined ? undefined : String(req.params.id);
      if (op === EXPAND_OPERATION) expandExtras(vars, req.headers, id);
      if (id !== undefined) vars.id = id;
      const data = await runOperation(restDocument(op), vars, contextFor(req));
      return data[op.graphqlField];
    };
    // metadata?mode=terminology is the TerminologyCapabilities (public, as the CapabilityStatement is); any other
    // mode goes on to the CapabilityStatement.
    r.get(
      `${base}/metadata`,
      asyncHandler(async (req, res, next) => {
        if (req.query.mode !== 'terminology') return next();
        const data = await runOperation(TerminologyCapabilitiesDoc, {}, contextFor(req));
        sendFhir(res, 200, data.terminologyCapabilities);
      }),
    );
    for (const op of TERMINOLOGY_OPERATIONS) {
      const type = `${base}/${op.resourceType}/\\$${op.code}`;
      const instance = `${base}/${op.resourceType}/:id/\\$${op.code}`;
      r.get(type, requireAuth, handle(op, false));
      r.post(type, requireAuth, jsonParser, handle(op, true));
      r.get(instance, requireAuth, handle(op, false));
      r.post(instance, requireAuth, jsonParser, handle(op, true));
    }
  };
