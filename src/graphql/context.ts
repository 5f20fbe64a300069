// The per-operation GraphQL context: who is calling (core's Caller), the request's facts, per-operation
// dataloaders, the services of this server instance, and `run` for internal operations. Resolvers are the only code
// that sees it: they hand the Caller to the features.
import DataLoader from 'dataloader';
import type { GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { callerOf, requireSignedIn, type Caller, type Principal, type RequestFacts } from '../core/caller.js';
import type { AuthService } from '../auth/service.js';
import type { ResourceRegistry } from '../fhir/registry.js';
import type { BotService } from '../bots/service.js';
import type { JobRunner } from '../bots/jobs.js';
import type { TerminologyService } from '../terminology/service.js';

/** What one server instance is made of, as resolvers reach it (the app assembles it from the features). */
export interface Services {
  config: Readonly<Config>;
  db: Database;
  logger: Logger;
  auth: AuthService;
  /** FHIR resource stores by type (every feature's). */
  fhir: ResourceRegistry;
  /** Bots: storage, execution, secrets. */
  bots: BotService;
  /** Asynchronous bot executions. */
  jobs: JobRunner;
  /** Terminology: CodeSystem/ValueSet resolution, indexes and $expand. */
  terminology: TerminologyService;
  /** Runs internal operations (the app wires the schema and the compiled executor: see executor.ts). */
  operations: Executor;
  /** An id for this process, for job claims and logs. */
  instanceId: string;
}

/** Runs internal GraphQL operations in-process, in a given context. Declared here and implemented by executor.ts
 * (which imports the schema, which imports every feature's types): a resolver reaches it through its context. */
export interface Executor {
  run<TData, TVars extends Record<string, unknown>>(
    document: TypedDocumentNode<TData, TVars>,
    variables: TVars,
    ctx: GraphQLContext,
  ): Promise<TData>;
  /** The full (internal) schema, for documents built from a field's definition. */
  readonly schema: GraphQLSchema;
}

export interface GraphQLContext {
  /** The signed-in caller; null when the request carries no access token (sign-in and token requests). */
  readonly caller: Caller | null;
  readonly request: RequestFacts;
  readonly services: Services;
  /** How many internal calls deep this operation runs: 0 for a request from outside, one more for each
   * `run(..., { nested: true })` (a bot calling a bot). */
  readonly depth: number;
  /** A per-operation DataLoader by name, created on first use (batching lookups by id within one operation). */
  loader<K, V>(name: string, batch: (keys: readonly K[]) => Promise<Array<V | Error>>): DataLoader<K, V>;
  /** Runs an internal operation as this caller, for this request, in a new context (its own dataloaders);
   * `nested` counts it as one call deeper. */
  run<TData, TVars extends Record<string, unknown>>(
    document: TypedDocumentNode<TData, TVars>,
    variables: TVars,
    opts?: { nested?: boolean },
  ): Promise<TData>;
}

/** A context (an object literal with own methods: yoga copies the context's own properties into its own). */
function operationContext(
  services: Services,
  caller: Caller | null,
  request: RequestFacts,
  depth: number,
): GraphQLContext {
  // Created on first use: most REST operations need no loader.
  let loaders: Map<string, DataLoader<unknown, unknown>> | undefined;
  return {
    caller,
    request,
    services,
    depth,
    loader<K, V>(name: string, batch: (keys: readonly K[]) => Promise<Array<V | Error>>) {
      loaders ??= new Map();
      let l = loaders.get(name) as DataLoader<K, V> | undefined;
      if (!l) {
        l = new DataLoader<K, V>(batch);
        loaders.set(name, l as DataLoader<unknown, unknown>);
      }
      return l;
    },
    run(document, variables, opts) {
      const child = operationContext(services, caller, request, opts?.nested ? depth + 1 : depth);
      return services.operations.run(document, variables, child);
    },
  };
}

/** The context for one operation of a request: signed in as `principal`, or anonymous (null). */
export function createContext(
  services: Services,
  principal: Principal | null,
  request: RequestFacts,
): GraphQLContext {
  return operationContext(services, principal ? callerOf(principal, request) : null, request, 0);
}

/** The signed-in caller, or a 401 when the request is not signed in. */
export function requireCaller(ctx: GraphQLContext): Caller {
  return requireSignedIn(ctx.caller);
}
