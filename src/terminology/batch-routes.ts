// POST [base]/ValueSet/$batch-validate-code and [base]/CodeSystem/$batch-validate-code: many $validate-code checks
// in one request, as the FHIR validator sends them (TerminologyClientR4.batchValidateVS/CS). Each `validation`
// parameter (a Parameters resource) is checked with the request's other parameters as its defaults (a parameter it
// names itself wins), through the same GraphQL operation as one $validate-code; the answers come back in order as
// `validation` parameters, a check that fails as its OperationOutcome. GraphQL clients batch with aliases instead.
import type { IRouter, RequestHandler } from 'express';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { ApiError, badRequest } from '../core/errors.js';
import { runOperation } from '../graphql/executor.js';
import { contextFor } from '../rest/request.js';
import { asyncHandler, requireAuth } from '../rest/middleware.js';
import { sendFhir } from '../rest/outcome.js';
import {
  CS_VALIDATE_CODE_OPERATION,
  VALIDATE_CODE_OPERATION,
  type OperationDeclaration,
} from './engine/index.js';
import { operationDocument, variablesFromParameters, type OperationVariables } from './operation-input.js';

type Entry = { name?: unknown; resource?: unknown; [value: string]: unknown };

/** What names the code to check: without one of these a validation has nothing to do. */
const CODE_PARAMETERS = new Set(['code', 'coding', 'codeableConcept']);

/** The answer for a validation that names no code (the words tx.fhir.org and the HL7 suite use). */
const NO_CODE = {
  resourceType: 'OperationOutcome',
  issue: [
    {
      severity: 'error',
      code: 'invalid',
      details: {
        text: 'Unable to find code to validate (looked for coding | codeableConcept | code+system | code+inferSystem in parameters',
      },
    },
  ],
};

/** The request's `parameter` list, or a 400. */
function entriesOf(body: unknown, what: string): Entry[] {
  const b = body as { resourceType?: unknown; parameter?: unknown } | undefined;
  if (!b || typeof b !== 'object' || b.resourceType !== 'Parameters')
    throw badRequest(`The body of ${what} must be a Parameters resource`, ['resourceType']);
  if (!Array.isArray(b.parameter))
    throw badRequest('Parameters.parameter must be an array', ['Parameters.parameter']);
  return b.parameter as Entry[];
}

/** Registers the batch routes; `max` is TERMINOLOGY_BATCH_MAX. */
export function batchValidateRoutes(r: IRouter, base: string, jsonParser: RequestHandler, max: number): void {
  const handle = (op: OperationDeclaration): RequestHandler =>
    asyncHandler(async (req, res) => {
      const what = `POST ${op.resourceType}/$batch-validate-code`;
      const entries = entriesOf(req.body, what);
      const common: Entry[] = [];
      const validations: Entry[][] = [];
      entries.forEach((e, i) => {
        if (!e || typeof e !== 'object' || typeof e.name !== 'string')
          throw badRequest(`Parameters.parameter[${i}].name is required`, [`Parameters.parameter[${i}]`]);
        if (e.name !== 'validation') return void common.push(e);
        const inner = e.resource as { resourceType?: unknown; parameter?: unknown } | undefined;
        if (!inner || inner.resourceType !== 'Parameters' || !Array.isArray(inner.parameter))
          throw badRequest(`Parameters.parameter[${i}] (validation) must be a Parameters resource`, [
            `Parameters.parameter[${i}]`,
          ]);
        validations.push(inner.parameter as Entry[]);
      });
      if (validations.length === 0)
        throw badRequest(`${what} needs at least one validation parameter`, ['validation']);
      if (validations.length > max)
        throw new ApiError(
          422,
          'too-costly',
          `${what} takes at most ${max} validation parameters (TERMINOLOGY_BATCH_MAX); got ${validations.length}`,
          { expression: ['validation'] },
        );
      const doc = operationDocument(op) as TypedDocumentNode<Record<string, unknown>, OperationVariables>;
      const out: Array<{ name: string; resource: unknown }> = [];
      for (const own of validations) {
        out.push({ name: 'validation', resource: await validateOne(op, doc, common, own, req) });
        // Other requests go between two checks: a batch never holds the event loop longer than one check.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      sendFhir(res, 200, { resourceType: 'Parameters', parameter: out });
    });
  for (const op of [VALIDATE_CODE_OPERATION, CS_VALIDATE_CODE_OPERATION]) {
    r.post(`${base}/${op.resourceType}/\\$batch-validate-code`, requireAuth, jsonParser, handle(op));
  }
}

/** One validation: the common parameters it does not name itself, then its own; its answer or its error. The
 * common parameters are the same objects for every validation, so a tx-resource is indexed once per batch. */
async function validateOne(
  op: OperationDeclaration,
  doc: TypedDocumentNode<Record<string, unknown>, OperationVariables>,
  common: Entry[],
  own: Entry[],
  req: Parameters<RequestHandler>[0],
): Promise<unknown> {
  const named = new Set(own.map((e) => (e && typeof e === 'object' ? e.name : undefined)));
  if (![...named].some((n) => typeof n === 'string' && CODE_PARAMETERS.has(n))) return NO_CODE;
  const parameter = [...common.filter((e) => !named.has(e.name)), ...own];
  try {
    const vars = variablesFromParameters({ resourceType: 'Parameters', parameter }, {}, op);
    const data = await runOperation(doc, vars, contextFor(req));
    return data[op.graphqlField];
  } catch (err) {
    // A client mistake in one validation is that validation's answer; anything else fails the request.
    if (err instanceof ApiError && err.status < 500) return err.toOperationOutcome();
    throw err;
  }
}
