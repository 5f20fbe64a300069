// Engine errors (TerminologyError: no transport) as the API errors REST and GraphQL answer with.
import { ApiError, type IssueCode } from '../core/errors.js';
import { TerminologyError } from './engine/index.js';

/** Engine errors become API errors with the engine's status and issue code; others pass through. */
export function toApiError(err: unknown): unknown {
  if (err instanceof TerminologyError) {
    // The engine's issue codes are FHIR IssueType codes ('code-invalid' included), valid in an OperationOutcome.
    return new ApiError(err.status, err.issueCode as IssueCode, err.message, {
      expression: err.expression,
      txIssueType: err.txIssueType,
    });
  }
  return err;
}
