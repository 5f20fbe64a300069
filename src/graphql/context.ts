// Per-request GraphQL context: who is calling (principal), request facts, and per-request dataloaders.
import DataLoader from 'dataloader';
import type { GraphQLSchema } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { Services } from '../services.js';
import { ApiError } from '../core/errors.js';

/** The authenticated caller, resolved from the access token's Login. */
export interface Principal {
  loginId: string;
  userId: string | null;
  clientId: string | null;
  projectId: string;
  membershipId: string;
  admin: boolean;
  scope: string;
  authMethod: string;
}

/** Facts about the HTTP request a GraphQL operation runs for. */
export interface RequestInfo {
  requestId: string;
  remoteAddress?: string;
  userAgent?: string;
  /** Request headers, lower-case names (Authorization and Cookie included: strip before handing on). */
  headers: Record<string, string | string[] | undefined>;
  /** The raw bearer token, when one authenticated the request (for logout/introspection). */
  token?: string;
}

export interface GraphQLContext {
  services: Services;
  principal: Principal | null;
  request: RequestInfo;
  /** A per-request DataLoader by name, created on first use (batching lookups by id within one request). */
  loader<K, V>(name: string, batch: (keys: readonly K[]) => Promise<Array<V | Error>>): DataLoader<K, V>;
}

/** Runs internal GraphQL operations in-process. The app wires it (the schema and the compiled executor), so a
 * feature can run another feature's operation without importing the schema, which imports every feature. */
export interface OperationRunner {
  run<TData, TVars extends Record<string, unknown>>(
    document: TypedDocumentNode<TData, TVars>,
    variables: TVars,
    ctx: GraphQLContext,
  ): Promise<TData>;
  /** The assembled schema, for documents built from a field's definition. */
  readonly schema: GraphQLSchema;
}

/** Builds a context for one request. */
export function createContext(
  services: Services,
  principal: Principal | null,
  request: RequestInfo,
): GraphQLContext {
  // Created on first use: most REST operations need no loader.
  let loaders: Map<string, DataLoader<unknown, unknown>> | undefined;
  return {
    services,
    principal,
    request,
    loader<K, V>(name: string, batch: (keys: readonly K[]) => Promise<Array<V | Error>>) {
      loaders ??= new Map();
      let l = loaders.get(name) as DataLoader<K, V> | undefined;
      if (!l) {
        l = new DataLoader<K, V>(batch);
        loaders.set(name, l as DataLoader<unknown, unknown>);
      }
      return l;
    },
  };
}

/** The caller, or a 401 when the request is not signed in. */
export function requirePrincipal(ctx: GraphQLContext): Principal {
  if (!ctx.principal) {
    throw new UnauthenticatedError();
  }
  return ctx.principal;
}

class UnauthenticatedError extends ApiError {
  constructor() {
    super(401, 'login', 'Authentication required: send Authorization: Bearer <access token>');
  }
}
