// GraphQL: the terminology operations as queries, each with the arguments of its declared parameter table
// (engine/parameters.ts) plus `id` (instance level): expandValueSet ($expand, returns the expanded ValueSet),
// lookupCode ($lookup), subsumes ($subsumes), validateCode (ValueSet/$validate-code) and validateCodeInCodeSystem
// (CodeSystem/$validate-code) and translate (ConceptMap/$translate), which return their Parameters resource; all
// as JSON.
import { builder } from '../graphql/builder.js';
import { fhirBaseUrl } from '../config.js';
import { requireCaller, type GraphQLContext } from '../graphql/context.js';
import {
  EXPAND_OPERATION,
  CS_VALIDATE_CODE_OPERATION,
  LOOKUP_OPERATION,
  SUBSUMES_OPERATION,
  TRANSLATE_OPERATION,
  VALIDATE_CODE_OPERATION,
  type CsValidateCodeOptions,
  type CsValidateCodeTargetParameters,
  type ExpandRequest,
  type ExpandTargetParameters,
  type LookupOptions,
  type LookupTargetParameters,
  type OperationDeclaration,
  type ParameterDefinition,
  type SubsumesParameters,
  type TranslateParameters,
  type ValidateCodeOptions,
  type ValidateCodeTargetParameters,
} from './engine/index.js';
import { splitArguments } from './operation-input.js';

/** Declares an operation's query field: its arguments come from its table; `run` gets them split. */
function operationField(
  op: OperationDeclaration,
  idDescription: string,
  run: (
    projectId: string,
    ctx: GraphQLContext,
    split: { target: Record<string, unknown>; options: Record<string, unknown> },
    id: string | undefined,
  ) => Promise<unknown>,
): void {
  builder.queryField(op.graphqlField, (t) => {
    const argument = (p: ParameterDefinition) => {
      const description = `${p.name}: ${p.description}`;
      switch (p.type) {
        case 'integer':
          return t.arg.int({ description });
        case 'boolean':
          return t.arg.boolean({ description });
        case 'resource':
        case 'coding':
        case 'codeableConcept':
          return p.repeats ? t.arg({ type: ['JSON'], description }) : t.arg({ type: 'JSON', description });
        default:
          return p.repeats ? t.arg.stringList({ description }) : t.arg.string({ description });
      }
    };
    const args = Object.fromEntries(op.parameters.map((p) => [p.key, argument(p)]));
    return t.field({
      type: 'JSON',
      description: op.description,
      args: { ...args, id: t.arg.string({ description: idDescription }) },
      resolve: (_r, a, ctx) => {
        const p = requireCaller(ctx);
        const { id } = a as { id?: unknown };
        // `id` is not in the table: splitArguments leaves it out.
        const split = splitArguments(a as Record<string, unknown>, op);
        return run(p.projectId, ctx, split, typeof id === 'string' ? id : undefined);
      },
    });
  });
}

operationField(
  EXPAND_OPERATION,
  'id of a stored ValueSet (instance $expand)',
  (projectId, ctx, split, id) => {
    const target = split.target as ExpandTargetParameters;
    const request: ExpandRequest = split.options as ExpandRequest;
    if (target.valueSetVersion !== undefined) request.valueSetVersion = target.valueSetVersion;
    return ctx.services.terminology.expand(
      projectId,
      {
        url: target.url,
        valueSetVersion: target.valueSetVersion,
        id,
        valueSet: target.valueSet,
        txResources: target.txResource,
      },
      request,
    );
  },
);

operationField(
  LOOKUP_OPERATION,
  'id of a stored CodeSystem (instance $lookup)',
  (projectId, ctx, split, id) =>
    ctx.services.terminology.lookup(
      projectId,
      { ...(split.target as LookupTargetParameters), id },
      split.options as LookupOptions,
    ),
);

operationField(
  SUBSUMES_OPERATION,
  'id of a stored CodeSystem (instance $subsumes)',
  (projectId, ctx, split, id) =>
    ctx.services.terminology.subsumes(projectId, { ...(split.target as SubsumesParameters), id }),
);

operationField(
  VALIDATE_CODE_OPERATION,
  'id of a stored ValueSet (instance $validate-code)',
  (projectId, ctx, split, id) =>
    ctx.services.terminology.validateCode(
      projectId,
      { ...(split.target as ValidateCodeTargetParameters), id },
      split.options as ValidateCodeOptions,
    ),
);

operationField(
  CS_VALIDATE_CODE_OPERATION,
  'id of a stored CodeSystem (instance $validate-code)',
  (projectId, ctx, split, id) =>
    ctx.services.terminology.validateCodeInCodeSystem(
      projectId,
      { ...(split.target as CsValidateCodeTargetParameters), id },
      split.options as CsValidateCodeOptions,
    ),
);

operationField(
  TRANSLATE_OPERATION,
  'id of a stored ConceptMap (instance $translate)',
  (projectId, ctx, split, id) =>
    ctx.services.terminology.translate(projectId, { ...(split.target as TranslateParameters), id }),
);

builder.queryField('terminologyCapabilities', (t) =>
  t.field({
    type: 'JSON',
    description:
      "The server's TerminologyCapabilities (GET [base]/metadata?mode=terminology): the shared code systems and " +
      'their versions, and the $expand parameters. Public, like the CapabilityStatement.',
    resolve: (_r, _a, ctx) => ctx.services.terminology.capabilities.get(fhirBaseUrl(ctx.services.config)),
  }),
);
