// GraphQL: the expandValueSet query ($expand). Returns the expanded ValueSet as JSON.
import { builder } from '../graphql/builder.js';
import { requireCaller } from '../graphql/context.js';
import { badRequest } from '../core/errors.js';
import type { ExpandRequest } from './engine/types.js';

function nonNegative(v: number | null | undefined, name: string): number | undefined {
  if (v === null || v === undefined) return undefined;
  if (v < 0) throw badRequest(`${name} must not be negative`, [name]);
  return v;
}

builder.queryField('expandValueSet', (t) =>
  t.field({
    type: 'JSON',
    description:
      'FHIR $expand: expands the value set given by url (optionally url|version), id, or an inline valueSet, ' +
      'visible to the caller (own project first, then the shared core definitions).',
    args: {
      url: t.arg.string(),
      valueSetVersion: t.arg.string(),
      id: t.arg.string(),
      valueSet: t.arg({ type: 'JSON' }),
      filter: t.arg.string(),
      offset: t.arg.int(),
      count: t.arg.int(),
      activeOnly: t.arg.boolean(),
      includeDesignations: t.arg.boolean(),
      displayLanguage: t.arg.string(),
      excludeNested: t.arg.boolean(),
      excludeNotForUI: t.arg.boolean(),
      systemVersion: t.arg.stringList({
        description: 'system|version: version to use when an include names none',
      }),
      forceSystemVersion: t.arg.stringList({
        description: 'system|version: version to use whatever the include says',
      }),
      checkSystemVersion: t.arg.stringList({
        description:
          'system|version: version (pattern, e.g. 1.0.x) a code system must have; the default when an include names none',
      }),
      includeDefinition: t.arg.boolean({ description: 'return the value set definition (compose) too' }),
      txResource: t.arg({
        type: ['JSON'],
        description:
          'CodeSystems/ValueSets for this request only (tx-resource), looked up before stored ones',
      }),
    },
    resolve: (_r, a, ctx) => {
      const p = requireCaller(ctx);
      const req: ExpandRequest = {};
      if (a.filter !== null && a.filter !== undefined) req.filter = a.filter;
      const offset = nonNegative(a.offset, 'offset');
      if (offset !== undefined) req.offset = offset;
      const count = nonNegative(a.count, 'count');
      if (count !== undefined) req.count = count;
      if (a.activeOnly !== null && a.activeOnly !== undefined) req.activeOnly = a.activeOnly;
      if (a.includeDesignations !== null && a.includeDesignations !== undefined)
        req.includeDesignations = a.includeDesignations;
      if (a.displayLanguage) req.displayLanguage = a.displayLanguage;
      if (a.excludeNested !== null && a.excludeNested !== undefined) req.excludeNested = a.excludeNested;
      if (a.excludeNotForUI !== null && a.excludeNotForUI !== undefined)
        req.excludeNotForUI = a.excludeNotForUI;
      if (a.valueSetVersion !== null && a.valueSetVersion !== undefined)
        req.valueSetVersion = a.valueSetVersion;
      if (a.systemVersion && a.systemVersion.length > 0) req.systemVersion = a.systemVersion;
      if (a.forceSystemVersion && a.forceSystemVersion.length > 0)
        req.forceSystemVersion = a.forceSystemVersion;
      if (a.checkSystemVersion && a.checkSystemVersion.length > 0)
        req.checkSystemVersion = a.checkSystemVersion;
      if (a.includeDefinition) req.includeDefinition = true;
      return ctx.services.terminology.expand(
        p.projectId,
        {
          url: a.url ?? undefined,
          valueSetVersion: a.valueSetVersion ?? undefined,
          id: a.id ?? undefined,
          valueSet: a.valueSet ?? undefined,
          txResources: a.txResource ?? undefined,
        },
        req,
      );
    },
  }),
);
