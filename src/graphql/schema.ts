// Assembles the schema from every feature's types. Importing a feature's graphql module registers its types.
// Two views of one schema: the internal one, which the REST layer and bots run operations against in-process, and
// the public one served at /graphql (and printed to schema.graphql), without the OAuth2 protocol internals: those
// are reached only through REST /oauth2/* (which answers with Cache-Control: no-store and OAuth2 error bodies).
import { GraphQLObjectType, GraphQLSchema, isIntrospectionType } from 'graphql';
import { builder } from './builder.js';
import '../auth/graphql.js';
import '../auth/graphql-members.js';
import '../auth/graphql-passwords.js';
import '../auth/graphql-clients.js';
import '../auth/graphql-mfa.js';
import '../auth/graphql-audit.js';
import '../auth/graphql-userinfo.js';
import '../fhir/graphql.js';
import '../bots/graphql.js';
import '../terminology/graphql.js';

/** Root fields kept out of the public schema: RFC 6749 token, RFC 7662 introspection, RFC 7009 revocation, and the
 * browser sign-in's code renewal (/oauth2/authorize). */
export const INTERNAL_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Query: ['introspect'],
  Mutation: ['token', 'revokeToken', 'renewLoginCode'],
};

/** The full schema, for internal operations (REST handlers, bots' `medplum` calls). */
export const schema = builder.toSchema({ sortSchema: true });

/** A copy of `full` whose root types lack the given fields (every other type is shared). */
function withoutRootFields(
  full: GraphQLSchema,
  hidden: Readonly<Record<string, readonly string[]>>,
): GraphQLSchema {
  const roots = [full.getQueryType(), full.getMutationType(), full.getSubscriptionType()];
  const strip = (type: GraphQLObjectType | null | undefined) => {
    if (!type) return undefined;
    const drop = hidden[type.name] ?? [];
    const config = type.toConfig();
    const fields = Object.fromEntries(Object.entries(config.fields).filter(([name]) => !drop.includes(name)));
    return new GraphQLObjectType({ ...config, fields });
  };
  const config = full.toConfig();
  return new GraphQLSchema({
    ...config,
    query: strip(roots[0]),
    mutation: strip(roots[1]),
    subscription: strip(roots[2]),
    types: config.types.filter((t) => !isIntrospectionType(t) && !roots.includes(t as GraphQLObjectType)),
  });
}

/** The public schema, served at /graphql. */
export const publicSchema = withoutRootFields(schema, INTERNAL_FIELDS);
