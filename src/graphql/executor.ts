// Runs internal GraphQL operations in-process (REST handlers, bots' `medplum` calls) against the full schema. Each
// document is validated once and compiled once with graphql-jit (the REST paths run the same few operations
// millions of times; the compiled form skips graphql-js's per-request planning and variable coercion machinery),
// then executed per request with the request's context. Errors come back as the ApiError the resolver threw (or
// a generic internal error).
import { validate, GraphQLError, type DocumentNode, type ExecutionResult } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { schema } from './schema.js';
import type { Executor, GraphQLContext } from './context.js';
import { ApiError } from '../core/errors.js';

const compiled = new WeakMap<DocumentNode, CompiledQuery>();

function compile(document: DocumentNode): CompiledQuery {
  const errors = validate(schema, document);
  if (errors.length > 0)
    throw new Error(`Internal operation is invalid: ${errors.map((e) => e.message).join('; ')}`);
  const query = compileQuery(schema, document);
  if (!isCompiledQuery(query))
    throw new Error(`Internal operation does not compile: ${query.errors?.map((e) => e.message).join('; ')}`);
  compiled.set(document, query);
  return query;
}

/** Executes an operation and returns its data, or throws its first error. */
export async function runOperation<TData, TVars extends Record<string, unknown>>(
  document: TypedDocumentNode<TData, TVars>,
  variables: TVars,
  ctx: GraphQLContext,
): Promise<TData> {
  const query = compiled.get(document) ?? compile(document);
  const result = (await query.query(undefined, ctx, variables)) as ExecutionResult;
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

/** The executor a server instance's contexts run internal operations with. */
export const executor: Executor = { run: runOperation, schema };
