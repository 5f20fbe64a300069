// Runs a GraphQL operation in-process for a REST handler: the document is validated once, then executed per request
// with the request's context. Errors come back as the ApiError the resolver threw (or a generic internal error).
import { execute, validate, GraphQLError, type DocumentNode } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { schema } from '../graphql/schema.js';
import type { GraphQLContext } from '../graphql/context.js';
import { ApiError } from '../graphql/errors.js';

const validated = new WeakSet<DocumentNode>();

/** Executes an operation and returns its data, or throws its first error. */
export async function runOperation<TData, TVars extends Record<string, unknown>>(
  document: TypedDocumentNode<TData, TVars>,
  variables: TVars,
  ctx: GraphQLContext,
): Promise<TData> {
  if (!validated.has(document)) {
    const errors = validate(schema, document);
    if (errors.length > 0)
      throw new Error(`Internal operation is invalid: ${errors.map((e) => e.message).join('; ')}`);
    validated.add(document);
  }
  const result = await execute({ schema, document, variableValues: variables, contextValue: ctx });
  if (result.errors && result.errors.length > 0) {
    throw unwrap(result.errors[0]);
  }
  return result.data as TData;
}

/** The error a resolver threw (ApiError), else the GraphQL error itself (variable coercion: a client mistake). */
function unwrap(err: GraphQLError): Error {
  const original = err.originalError;
  if (original instanceof ApiError) return original;
  if (original && !(original instanceof GraphQLError)) return original;
  if (!original) return new ApiError(400, 'invalid', err.message);
  return original;
}
