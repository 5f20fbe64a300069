// Typed documents for the GraphQL operations the REST layer runs (src/rest/**), generated from
// schema.internal.graphql (the public schema.graphql lacks the OAuth2 internals).
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  // The internal schema: REST runs the OAuth2 operations the public one hides.
  schema: 'schema.internal.graphql',
  documents: ['src/rest/**/*.ts'],
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
