// Budgets for documents sent to /graphql, checked before any resolver runs: tokens (while parsing, so a huge
// document stops being parsed at the limit), depth, aliases, directives, a shape cost, and a count of expensive
// fields (each one is a database round trip, an expansion or a sandbox run). Over budget: HTTP 400 naming the
// limit and its setting. Suggestions ("Did you mean ...?") and introspection go to whom GRAPHQL_INTROSPECTION says.
import { GraphQLError, Kind, type ASTVisitor, type SelectionSetNode, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { blockFieldSuggestionsPlugin } from '@escape.tech/graphql-armor-block-field-suggestions';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import type { Config } from '../config.js';
import type { IntrospectionMode } from '../config/readers.js';

/** The /graphql budgets: the GRAPHQL_* settings (the settings table, src/config/settings.ts). */
export type GraphQLLimits = Config['graphql'];

/** Fields whose every occurrence costs a database query, an expansion, a password hash or a bot run. */
export const EXPENSIVE_FIELDS: ReadonlySet<string> = new Set([
  'Query.expandValueSet',
  'Query.lookupCode',
  'Query.validateCode',
  'Query.validateCodeInCodeSystem',
  'Query.subsumes',
  'Query.searchResources',
  'Query.botExecutions',
  'Query.auditEvents',
  'Me.sessions',
  'Mutation.executeBot',
  'Mutation.executeBotAsync',
  'Mutation.login',
  'Mutation.token',
  'Mutation.createUser',
  'Mutation.createProject',
  'Mutation.changePassword',
  'Mutation.requestPasswordReset',
  'Mutation.setPassword',
  'Mutation.createResource',
  'Mutation.updateResource',
]);

/** Marks a limit error as the client's mistake: yoga answers it with HTTP 400, whatever the Accept header
 * (`spec: false`: by the GraphQL-over-HTTP spec an application/json client would get 200 with errors). */
function asBadRequest(error: GraphQLError): void {
  // GraphQLError.extensions is typed read-only but is a plain object; yoga reads `http` from it.
  (error.extensions as Record<string, unknown>).http = { status: 400, spec: false };
}

const rejectAs400 = { onReject: [(_ctx: unknown, error: GraphQLError) => asBadRequest(error)] };

/** Counts expensive fields in each operation, following fragment spreads (each use counts; cycles stop). */
export function expensiveFieldsRule(max: number) {
  return (context: ValidationContext): ASTVisitor => {
    const count = (set: SelectionSetNode, typeName: string, seen: Set<string>): number => {
      const schema = context.getSchema();
      const parent = schema.getType(typeName);
      let n = 0;
      for (const sel of set.selections) {
        if (sel.kind === Kind.FIELD) {
          if (EXPENSIVE_FIELDS.has(`${typeName}.${sel.name.value}`)) n++;
          if (sel.selectionSet && parent && 'getFields' in parent) {
            const field = parent.getFields()[sel.name.value];
            let t = field?.type as { ofType?: unknown; name?: string } | undefined;
            while (t && t.ofType) t = t.ofType as typeof t;
            if (t?.name) n += count(sel.selectionSet, t.name, seen);
          }
        } else if (sel.kind === Kind.INLINE_FRAGMENT) {
          n += count(sel.selectionSet, sel.typeCondition?.name.value ?? typeName, seen);
        } else {
          const name = sel.name.value;
          const frag = context.getFragment(name);
          if (!frag || seen.has(name)) continue;
          seen.add(name);
          n += count(frag.selectionSet, frag.typeCondition.name.value, seen);
          seen.delete(name);
        }
        if (n > max) return n;
      }
      return n;
    };
    return {
      OperationDefinition(node) {
        const root =
          node.operation === 'query'
            ? context.getSchema().getQueryType()
            : node.operation === 'mutation'
              ? context.getSchema().getMutationType()
              : context.getSchema().getSubscriptionType();
        if (!root) return;
        const n = count(node.selectionSet, root.name, new Set());
        if (n > max) {
          const error = new GraphQLError(
            `Too many expensive fields in one operation (more than ${max}; GRAPHQL_MAX_EXPENSIVE_FIELDS): ` +
              'send them in separate requests',
            { nodes: [node] },
          );
          asBadRequest(error);
          context.reportError(error);
        }
      },
    };
  };
}

/** The yoga plugins enforcing the limits. */
export function graphqlLimitPlugins(limits: GraphQLLimits): Plugin[] {
  const plugins: Plugin[] = [
    maxTokensPlugin({
      n: limits.maxTokens,
      exposeLimits: false,
      errorMessage: `Token limit (GRAPHQL_MAX_TOKENS=${limits.maxTokens}) exceeded`,
      ...rejectAs400,
    }) as Plugin,
    maxDepthPlugin({
      n: limits.maxDepth,
      exposeLimits: false,
      flattenFragments: true,
      errorMessage: `Query depth limit (GRAPHQL_MAX_DEPTH=${limits.maxDepth}) exceeded`,
      ...rejectAs400,
    }) as Plugin,
    maxAliasesPlugin({
      n: limits.maxAliases,
      exposeLimits: false,
      errorMessage: `Alias limit (GRAPHQL_MAX_ALIASES=${limits.maxAliases}) exceeded`,
      ...rejectAs400,
    }) as Plugin,
    maxDirectivesPlugin({
      n: limits.maxDirectives,
      exposeLimits: false,
      errorMessage: `Directive limit (GRAPHQL_MAX_DIRECTIVES=${limits.maxDirectives}) exceeded`,
      ...rejectAs400,
    }) as Plugin,
    costLimitPlugin({
      maxCost: limits.maxCost,
      exposeLimits: false,
      errorMessage: `Query cost limit (GRAPHQL_MAX_COST=${limits.maxCost}) exceeded`,
      ...rejectAs400,
    }) as Plugin,
    {
      // Parse errors (the token limit) are marked `spec: true` by yoga's own parse hook (200 for
      // application/json): mark the limit errors again as the result is sent.
      onResultProcess({ result }) {
        const results = Array.isArray(result) ? result : [result];
        for (const r of results) {
          const errors = (r as { errors?: readonly GraphQLError[] }).errors;
          for (const e of errors ?? []) {
            if (e instanceof GraphQLError && e.message.includes('(GRAPHQL_MAX_')) asBadRequest(e);
          }
        }
      },
      onValidate({ addValidationRule, context }) {
        addValidationRule(expensiveFieldsRule(limits.maxExpensiveFields));
        if (!mayIntrospect(limits.introspection, context)) addValidationRule(NoSchemaIntrospectionCustomRule);
      },
    },
  ];
  if (limits.introspection !== 'all') {
    // graphql-armor's mask of "Did you mean" suggestions, for the callers who may not introspect.
    const hide = blockFieldSuggestionsPlugin() as Plugin;
    plugins.push({
      onValidate(payload) {
        if (mayIntrospect(limits.introspection, payload.context)) return undefined;
        return hide.onValidate?.(payload);
      },
    } as Plugin);
  }
  return plugins;
}

/** Whether the caller of this operation may introspect the schema and see suggestions: everyone, no one, or (the
 * production default) callers the front middleware authenticated with a valid access token. Yoga hands the
 * Express request over as the server context, present when the operation is validated. */
function mayIntrospect(mode: IntrospectionMode, context: unknown): boolean {
  if (mode !== 'signed-in') return mode === 'all';
  const req = (context as { req?: { principal?: unknown } } | undefined)?.req;
  return Boolean(req?.principal);
}
