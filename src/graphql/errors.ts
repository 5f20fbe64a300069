// The GraphQL edge of the application errors (src/core/errors.ts): yoga's maskError turns an ApiError into a
// GraphQLError with `code`, `http.status` (the response status), `expression` and `oauthError` extensions, as
// clients saw it when ApiError was itself a GraphQLError; an unreachable database is a 503 `transient` error;
// every other error stays masked (500).
import { GraphQLError } from 'graphql';
import { maskError as yogaMaskError } from 'graphql-yoga';
import { ApiError, databaseUnavailable, isDatabaseUnavailable } from '../core/errors.js';

/** GraphQL extensions of an application error. */
function extensionsOf(err: ApiError): Record<string, unknown> {
  return {
    code: err.issueCode,
    http: { status: err.status, ...(err.headers ? { headers: err.headers } : {}) },
    ...(err.expression ? { expression: err.expression } : {}),
    ...(err.oauthError ? { oauthError: err.oauthError } : {}),
    ...(err.txIssueType ? { txIssueType: err.txIssueType } : {}),
  };
}

/** yoga's maskedErrors.maskError: application errors are shown (with their status), anything else is masked. */
export function maskError(error: unknown, message: string, isDev?: boolean): Error {
  const thrown = error instanceof GraphQLError ? error.originalError : error;
  // An unreachable database is transient, not internal: code `transient`, HTTP 503 with Retry-After.
  const original =
    !(thrown instanceof ApiError) && isDatabaseUnavailable(thrown) ? databaseUnavailable() : thrown;
  if (original instanceof ApiError) {
    const located = error instanceof GraphQLError ? error : undefined;
    return new GraphQLError(original.message, {
      nodes: located?.nodes,
      source: located?.source,
      positions: located?.positions,
      path: located?.path,
      originalError: original,
      extensions: extensionsOf(original),
    });
  }
  return yogaMaskError(error, message, isDev);
}
