// Typed documents for the GraphQL operations the REST layer runs (src/rest/**), generated from schema.graphql.
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'schema.graphql',
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
