// `npm run check:deps`: the dependency rule of README "Development" (layout). Type-only imports count too
// (tsPreCompilationDeps). Cycles that existed when this check came in are listed in
// .dependency-cruiser-known-violations.json (regenerate it only to remove entries); any new one fails CI.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles (type imports included).',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'core-imports-nothing-of-ours',
      severity: 'error',
      comment: 'src/core (errors, caller) is the bottom layer.',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
    {
      name: 'features-not-to-http-or-app',
      severity: 'error',
      comment: 'Features, GraphQL and the database never import the HTTP layer (src/rest) or the app wiring.',
      from: { path: '^src/(core|db|auth|terminology|bots|fhir|graphql)/' },
      to: { path: '^src/(rest/|server\\.ts$|main\\.ts$)' },
    },
    {
      name: 'features-not-to-graphql-errors',
      severity: 'error',
      comment: 'Features throw src/core/errors.ts; src/graphql/errors.ts is the GraphQL edge (and a shim).',
      from: { path: '^src/(core|db|auth|terminology|bots|fhir)/' },
      to: { path: '^src/graphql/errors\\.ts$' },
    },
    {
      name: 'db-below-features',
      severity: 'error',
      comment: 'The database layer imports no feature, GraphQL or HTTP code.',
      from: { path: '^src/db/' },
      to: { path: '^src/(auth|terminology|bots|fhir|graphql|rest)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
