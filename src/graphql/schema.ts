// Assembles the schema from every feature's types. Importing a feature's graphql module registers its types.
import { builder } from './builder.js';
import '../auth/graphql.js';
import '../fhir/graphql.js';
import '../bots/graphql.js';
import '../terminology/graphql.js';

/** The executable GraphQL schema. */
export const schema = builder.toSchema({ sortSchema: true });
