// GraphQL: the expandValueSet query ($expand). Its arguments are the $expand parameter table
// (engine/parameters.ts) plus `id`; it returns the expanded ValueSet as JSON.
import { builder } from '../graphql/builder.js';
import { requireCaller } from '../graphql/context.js';
import { EXPAND_PARAMETERS, type ExpandParameterDefinition, type ExpandRequest } from './engine/index.js';
import { splitArguments } from './expand-input.js';

builder.queryField('expandValueSet', (t) => {
  const argument = (p: ExpandParameterDefinition) => {
    const description = `${p.name}: ${p.description}`;
    switch (p.type) {
      case 'integer':
        return t.arg.int({ description });
      case 'boolean':
        return t.arg.boolean({ description });
      case 'resource':
        return p.repeats ? t.arg({ type: ['JSON'], description }) : t.arg({ type: 'JSON', description });
      default:
        return p.repeats ? t.arg.stringList({ description }) : t.arg.string({ description });
    }
  };
  const args = Object.fromEntries(EXPAND_PARAMETERS.map((p) => [p.key, argument(p)]));
  return t.field({
    type: 'JSON',
    description:
      'FHIR $expand: expands the value set given by url (optionally url|version), id, or an inline valueSet, ' +
      'visible to the caller (own project first, then the shared core definitions).',
    args: { ...args, id: t.arg.string({ description: 'id of a stored ValueSet (instance $expand)' }) },
    resolve: (_r, a, ctx) => {
      const p = requireCaller(ctx);
      const { id } = a as { id?: unknown };
      const { target, options } = splitArguments(a as Record<string, unknown>); // `id` is not in the table
      const request: ExpandRequest = options;
      if (target.valueSetVersion !== undefined) request.valueSetVersion = target.valueSetVersion;
      return ctx.services.terminology.expand(
        p.projectId,
        {
          url: target.url,
          valueSetVersion: target.valueSetVersion,
          id: typeof id === 'string' ? id : undefined,
          valueSet: target.valueSet,
          txResources: target.txResource,
        },
        request,
      );
    },
  });
});
