// Generic FHIR CRUD and search over the registered stores, as GraphQL operations the REST layer runs.
import { builder } from '../graphql/builder.js';
import { requireCaller, type GraphQLContext } from '../graphql/context.js';
import { badRequest } from '../core/errors.js';
import { validateResourceBody } from './registry.js';
import type { ResourceBudget } from './resource-strings.js';
import type { Bundle } from './types.js';
import { fhirBaseUrl } from '../config.js';
import { holdingLazy, holdsLazy, streamingAllowed } from './lazy-json.js';
import { parseSubsetting, subset } from './subsetting.js';

builder.queryField('readResource', (t) =>
  t.field({
    type: 'JSON',
    description:
      'Read by id; `summary` and `elements` are FHIR `_summary` (true, text, data, false) and `_elements`.',
    args: {
      resourceType: t.arg.string({ required: true }),
      id: t.arg.string({ required: true }),
      summary: t.arg.string(),
      elements: t.arg.string(),
    },
    resolve: async (_r, args, ctx) => {
      const caller = requireCaller(ctx);
      const s = parseSubsetting(args.summary ?? undefined, args.elements ?? undefined, false);
      return subset(
        await ctx.services.fhir
          .get(args.resourceType)
          .read(caller, args.id, s, { stream: streamingAllowed(ctx) }),
        s,
      );
    },
  }),
);

builder.queryField('searchResources', (t) =>
  t.field({
    type: 'JSON',
    description:
      'Search by url, version, identifier or name; returns a searchset Bundle. `summary` and `elements` are ' +
      'FHIR `_summary` (true, text, data, count, false) and `_elements`.',
    args: {
      resourceType: t.arg.string({ required: true }),
      url: t.arg.string(),
      version: t.arg.string(),
      identifier: t.arg.string(),
      name: t.arg.string(),
      count: t.arg.int(),
      offset: t.arg.int(),
      summary: t.arg.string(),
      elements: t.arg.string(),
    },
    resolve: async (_r, args, ctx): Promise<Bundle> => {
      const caller = requireCaller(ctx);
      const s = parseSubsetting(args.summary ?? undefined, args.elements ?? undefined, true);
      const count = s.summary === 'count' ? 0 : (args.count ?? 20);
      const offset = args.offset ?? 0;
      if (count < 0 || count > 1000) throw badRequest('_count must be between 0 and 1000', ['_count']);
      if (offset < 0) throw badRequest('_offset must not be negative', ['_offset']);
      const store = ctx.services.fhir.get(args.resourceType);
      const { resources, total } = await store.search(caller, {
        url: args.url ?? undefined,
        version: args.version ?? undefined,
        identifier: args.identifier ?? undefined,
        name: args.name ?? undefined,
        count,
        offset,
        subsetting: s,
        stream: streamingAllowed(ctx),
      });
      const base = `${fhirBaseUrl(ctx.services.config)}/`;
      const entry = resources.map((found) => {
        const r = subset(found, s);
        const e = {
          fullUrl: `${base}${r.resourceType}/${r.id}`,
          resource: r,
          search: { mode: 'match' as const },
        };
        return holdsLazy(r) ? holdingLazy(e) : e;
      });
      const bundle: Bundle = { resourceType: 'Bundle', type: 'searchset', total, entry };
      // Entries streamed by the REST layer (big CodeSystems): the Bundle is written piece by piece too.
      if (entry.some((e) => holdsLazy(e))) holdingLazy(entry);
      return holdsLazy(entry) ? holdingLazy(bundle) : bundle;
    },
  }),
);

/** What one written resource may hold (RESOURCE_MAX_CHARS, RESOURCE_MAX_ELEMENTS). */
function resourceBudget(ctx: GraphQLContext): ResourceBudget {
  const { resourceMaxChars, resourceMaxElements } = ctx.services.config;
  return { maxChars: resourceMaxChars, maxElements: resourceMaxElements };
}

builder.mutationField('createResource', (t) =>
  t.field({
    type: 'JSON',
    args: {
      resourceType: t.arg.string({ required: true }),
      resource: t.arg({ type: 'JSON', required: true }),
    },
    resolve: async (_r, args, ctx) => {
      const caller = requireCaller(ctx);
      const store = ctx.services.fhir.get(args.resourceType);
      const resource = await validateResourceBody(
        args.resource,
        args.resourceType,
        undefined,
        resourceBudget(ctx),
        store,
      );
      return store.create(caller, resource, { stream: streamingAllowed(ctx) });
    },
  }),
);

builder.mutationField('updateResource', (t) =>
  t.field({
    type: 'JSON',
    args: {
      resourceType: t.arg.string({ required: true }),
      id: t.arg.string({ required: true }),
      resource: t.arg({ type: 'JSON', required: true }),
    },
    resolve: async (_r, args, ctx) => {
      const caller = requireCaller(ctx);
      const store = ctx.services.fhir.get(args.resourceType);
      const resource = await validateResourceBody(
        args.resource,
        args.resourceType,
        args.id,
        resourceBudget(ctx),
        store,
      );
      return store.update(caller, args.id, resource, {
        stream: streamingAllowed(ctx),
      });
    },
  }),
);

builder.mutationField('deleteResource', (t) =>
  t.boolean({
    args: { resourceType: t.arg.string({ required: true }), id: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => {
      const caller = requireCaller(ctx);
      await ctx.services.fhir.get(args.resourceType).delete(caller, args.id);
      return true;
    },
  }),
);
