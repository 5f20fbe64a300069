// Typed documents for the GraphQL operations the REST routes run (each feature's routes.ts, *-routes.ts, and
// *-document.ts for a document several route files share),
// generated from schema.internal.graphql (the public schema.graphql lacks the OAuth2 internals).
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  // The internal schema: REST runs the OAuth2 operations the public one hides.
  schema: 'schema.internal.graphql',
  documents: ['src/**/routes.ts', 'src/**/*-routes.ts', 'src/**/*-document.ts'],
  ignoreNoDocuments: true,
  generates: {
    'src/generated/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        scalars: { JSON: 'unknown', DateTime: 'string' },
        useTypeImports: true,
        emitLegacyCommonJSImports: false,
        enumsAsTypes: true,
      },
    },
  },
};

export default config;
