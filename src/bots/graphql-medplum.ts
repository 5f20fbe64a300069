// The host side of a bot's execution, built by the GraphQL side for the caller's context: the `medplum` argument,
// each method an internal GraphQL operation run as the caller (ctx.run), so a bot can do exactly what its caller
// can do in the bot's project, nothing more; and the execution budget of the incoming request.
import { getNamedType, isScalarType, parse, print, type GraphQLArgument, type GraphQLSchema } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { GraphQLContext } from '../graphql/context.js';
import type { RequestFacts } from '../core/caller.js';
import { ApiError } from '../core/errors.js';
import type { BotResult, ExecutionHost } from './types.js';

/** Nested medplum.executeBot calls allowed from one request (a bot calling a bot calling a bot ...). */
export const MAX_BOT_DEPTH = 5;

/** Bot executions caused so far by each incoming request: every context run for a request (ctx.run) shares its
 * request facts, so bots calling bots count against their root request. */
const executions = new WeakMap<RequestFacts, number>();

/** The host of an execution run in ctx: its `medplum` functions and the request's execution counter. */
export function executionHost(ctx: GraphQLContext): ExecutionHost {
  return {
    medplum: medplumFunctions(ctx),
    countExecution: () => {
      const n = (executions.get(ctx.request) ?? 0) + 1;
      executions.set(ctx.request, n);
      return n;
    },
  };
}

function doc<TData, TVars>(text: string): TypedDocumentNode<TData, TVars> {
  return parse(text) as TypedDocumentNode<TData, TVars>;
}

type Vars = Record<string, unknown>;
const ReadDoc = doc<{ readResource: unknown }, Vars>(
  'query BotRead($resourceType: String!, $id: String!) { readResource(resourceType: $resourceType, id: $id) }',
);
const SearchDoc = doc<
  { searchResources: unknown },
  Vars
>(`query BotSearch($resourceType: String!, $url: String,
  $version: String, $identifier: String, $name: String, $count: Int, $offset: Int) {
  searchResources(resourceType: $resourceType, url: $url, version: $version, identifier: $identifier, name: $name,
    count: $count, offset: $offset) }`);
const CreateDoc = doc<{ createResource: unknown }, Vars>(
  'mutation BotCreate($resourceType: String!, $resource: JSON!) { createResource(resourceType: $resourceType, resource: $resource) }',
);
const UpdateDoc = doc<{ updateResource: unknown }, Vars>(
  'mutation BotUpdate($resourceType: String!, $id: String!, $resource: JSON!) { updateResource(resourceType: $resourceType, id: $id, resource: $resource) }',
);
const DeleteDoc = doc<{ deleteResource: boolean }, Vars>(
  'mutation BotDelete($resourceType: String!, $id: String!) { deleteResource(resourceType: $resourceType, id: $id) }',
);
const ExecuteDoc = doc<
  { executeBot: BotResult },
  Vars
>(`mutation BotExecuteNested($id: String, $identifier: String,
  $contentType: String, $body: String) { executeBot(id: $id, identifier: $identifier, contentType: $contentType,
  body: $body) { status contentType body headers outcome } }`);

let expandDoc: TypedDocumentNode<{ expandValueSet: unknown }, Vars> | null | undefined;
let expandArgs: readonly GraphQLArgument[] = [];

/** The expandValueSet query, built from the schema at first use (it belongs to the terminology feature). */
function expandDocument(schema: GraphQLSchema): TypedDocumentNode<{ expandValueSet: unknown }, Vars> | null {
  if (expandDoc !== undefined) return expandDoc;
  const field = schema.getQueryType()?.getFields().expandValueSet;
  if (!field || !isScalarType(getNamedType(field.type))) {
    expandDoc = null;
    return null;
  }
  expandArgs = field.args;
  const defs = field.args.map((a) => `$${a.name}: ${String(a.type)}`).join(', ');
  const uses = field.args.map((a) => `${a.name}: $${a.name}`).join(', ');
  const text = field.args.length
    ? `query BotExpand(${defs}) { expandValueSet(${uses}) }`
    : 'query BotExpand { expandValueSet }';
  expandDoc = doc(print(parse(text)));
  return expandDoc;
}

function str(v: unknown, what: string): string {
  if (typeof v !== 'string' || v === '')
    throw new ApiError(400, 'invalid', `${what} must be a non-empty string`);
  return v;
}

function obj(v: unknown, what: string): Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw new ApiError(400, 'invalid', `${what} must be an object`);
  return v as Record<string, unknown>;
}

/** The bot's response body as a value: parsed JSON for JSON types, else the text. */
function resultValue(r: BotResult): unknown {
  if (/json/.test(r.contentType)) {
    try {
      return JSON.parse(r.body);
    } catch {
      return r.body;
    }
  }
  return r.body;
}

/** The medplum host functions for one execution, bound to the caller (ctx). Each call runs in a context of its
 * own (ctx.run): per-operation dataloaders must not outlive one operation. */
function medplumFunctions(ctx: GraphQLContext): ExecutionHost['medplum'] {
  const searchQuery = (resourceType: unknown, query: unknown) => {
    const q = query && typeof query === 'object' ? (query as Record<string, unknown>) : {};
    const s = (k: string) => (q[k] === undefined ? undefined : String(q[k]));
    const n = (k: string) => (q[k] === undefined ? undefined : Number(q[k]));
    return {
      resourceType: str(resourceType, 'resourceType'),
      url: s('url'),
      version: s('version'),
      identifier: s('identifier'),
      name: s('name'),
      count: n('_count'),
      offset: n('_offset'),
    };
  };
  const search = async (resourceType: unknown, query: unknown) =>
    (await ctx.run(SearchDoc, searchQuery(resourceType, query))).searchResources;
  return {
    readResource: async (resourceType, id) =>
      (await ctx.run(ReadDoc, { resourceType: str(resourceType, 'resourceType'), id: str(id, 'id') }))
        .readResource,
    search,
    searchResources: async (resourceType, query) => {
      const bundle = (await search(resourceType, query)) as { entry?: Array<{ resource: unknown }> };
      return (bundle.entry ?? []).map((e) => e.resource);
    },
    searchOne: async (resourceType, query) => {
      const bundle = (await search(resourceType, { ...obj(query ?? {}, 'query'), _count: 1 })) as {
        entry?: Array<{ resource: unknown }>;
      };
      return bundle.entry?.[0]?.resource;
    },
    createResource: async (resource) => {
      const r = obj(resource, 'resource');
      return (await ctx.run(CreateDoc, { resourceType: str(r.resourceType, 'resourceType'), resource: r }))
        .createResource;
    },
    updateResource: async (resource) => {
      const r = obj(resource, 'resource');
      return (
        await ctx.run(UpdateDoc, {
          resourceType: str(r.resourceType, 'resourceType'),
          id: str(r.id, 'resource.id'),
          resource: r,
        })
      ).updateResource;
    },
    deleteResource: async (resourceType, id) => {
      await ctx.run(DeleteDoc, { resourceType: str(resourceType, 'resourceType'), id: str(id, 'id') });
      return undefined;
    },
    executeBot: async (idOrIdentifier, input, contentType) => {
      if (ctx.depth + 1 > MAX_BOT_DEPTH)
        throw new ApiError(
          400,
          'too-costly',
          `Bots may call bots at most ${MAX_BOT_DEPTH} levels deep (medplum.executeBot)`,
        );
      let id: string | undefined;
      let identifier: string | undefined;
      if (typeof idOrIdentifier === 'string') id = idOrIdentifier;
      else {
        const i = obj(idOrIdentifier, 'bot id or identifier');
        identifier = i.system
          ? `${String(i.system)}|${str(i.value, 'identifier.value')}`
          : str(i.value, 'value');
      }
      const type = typeof contentType === 'string' && contentType ? contentType : 'application/json';
      const body = typeof input === 'string' ? input : JSON.stringify(input ?? null);
      const r = (await ctx.run(ExecuteDoc, { id, identifier, contentType: type, body }, { nested: true }))
        .executeBot;
      if (r.status >= 400) {
        const value = resultValue(r) as { issue?: Array<{ details?: { text?: string } }> };
        throw new Error(value?.issue?.[0]?.details?.text ?? `Bot answered ${r.status}`);
      }
      return resultValue(r);
    },
    valueSetExpand: async (params) => {
      const d = expandDocument(ctx.services.operations.schema);
      if (!d) throw new ApiError(501, 'not-supported', 'ValueSet expansion is not available on this server');
      const p = params && typeof params === 'object' ? (params as Record<string, unknown>) : {};
      const vars: Vars = {};
      for (const a of expandArgs) if (p[a.name] !== undefined) vars[a.name] = p[a.name];
      return (await ctx.run(d, vars)).expandValueSet;
    },
  };
}
