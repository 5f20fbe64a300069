// Errors that carry an HTTP status and a FHIR issue code, so REST can answer with the right OperationOutcome
// and GraphQL clients see a clear message. Anything else is an internal error (masked, 500).
import { GraphQLError } from 'graphql';

/** FHIR IssueType codes we use. */
export type IssueCode =
  | 'invalid'
  | 'required'
  | 'value'
  | 'structure'
  | 'not-found'
  | 'forbidden'
  | 'login'
  | 'security'
  | 'conflict'
  | 'duplicate'
  | 'too-costly'
  | 'not-supported'
  | 'processing'
  | 'exception'
  | 'timeout'
  | 'throttled'
  | 'informational';

/** A client-facing error with its HTTP status. */
export class ApiError extends GraphQLError {
  constructor(
    public readonly status: number,
    public readonly issueCode: IssueCode,
    message: string,
    extra: { expression?: string[]; oauthError?: string; txIssueType?: string } = {},
  ) {
    super(message, {
      extensions: {
        code: issueCode,
        http: { status },
        ...(extra.expression ? { expression: extra.expression } : {}),
        ...(extra.oauthError ? { oauthError: extra.oauthError } : {}),
        ...(extra.txIssueType ? { txIssueType: extra.txIssueType } : {}),
      },
    });
  }
}

/** 400 invalid input. */
export const badRequest = (message: string, expression?: string[]) =>
  new ApiError(400, 'invalid', message, { expression });
/** 401 not signed in / token not accepted. */
export const unauthorized = (message = 'Unauthorized') => new ApiError(401, 'login', message);
/** 403 signed in but not allowed. */
export const forbidden = (message = 'Forbidden') => new ApiError(403, 'forbidden', message);
/** 404 not found (also used where revealing existence would leak). */
export const notFound = (message = 'Not found') => new ApiError(404, 'not-found', message);
/** 409 conflict (duplicates). */
export const conflict = (message: string) => new ApiError(409, 'duplicate', message);
