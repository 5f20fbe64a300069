// `npm run check:deps`: the dependency rule of README "Development", by layer rather than by file. Type-only
// imports count too (tsPreCompilationDeps). From the bottom:
//   core      src/core/ and src/config.ts            imports nothing of ours
//   db        src/db/                                -> core
//   features  every other folder (auth, bots, ...)   -> core, db; its GraphQL side (graphql.ts, graphql-*.ts)
//                                                       also -> src/graphql (builder, context)
//   graphql   src/graphql/                           -> core, db, features
//   http      src/rest/                              -> core, graphql
//   app       src/app/ and the files at src/ (server.ts, main.ts, ...)   -> anything; imported by nothing
// A feature never imports another feature (its process entry, a *-cli.ts file, may: it assembles a small app).
/** A folder that is no layer of its own is a feature. */
const FEATURE = '^src/(?!(?:core|db|graphql|rest|app|generated)/)[^/]+/';
/** A feature's GraphQL side. */
const FEATURE_GRAPHQL = `${FEATURE}graphql(\\.|-[^/]*\\.)ts$`;
/** The app: src/app/ and the files directly in src/ other than config.ts. */
const APP = '^src/(app/|(?!config\\.ts$)[^/]+\\.ts$)';

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
      name: 'core-is-the-bottom',
      severity: 'error',
      comment: 'src/core (caller, errors, FHIR shapes) and src/config.ts import nothing of ours but core.',
      from: { path: '^src/(core/|config\\.ts$)' },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
    {
      name: 'db-on-core',
      severity: 'error',
      comment: 'The database layer imports only core and config.',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: '^src/(core/|db/|config\\.ts$|generated/)' },
    },
    {
      name: 'feature-on-core-and-db',
      severity: 'error',
      comment:
        "A feature's domain code imports core, config, db and its own folder: not GraphQL, HTTP or the app.",
      from: { path: FEATURE, pathNot: FEATURE_GRAPHQL },
      to: { path: `^src/(graphql|rest)/|${APP}|${FEATURE_GRAPHQL}` },
    },
    {
      name: 'feature-graphql-on-the-builder',
      severity: 'error',
      comment:
        "A feature's GraphQL side adds to the builder and reads the context; it never imports HTTP or the app.",
      from: { path: FEATURE_GRAPHQL },
      to: { path: `^src/rest/|${APP}` },
    },
    {
      name: 'features-apart',
      severity: 'error',
      comment:
        'A feature does not import another feature (shared shapes live in core); a *-cli.ts entry may.',
      from: { path: '^src/([^/]+)/', pathNot: ['^src/(core|db|graphql|rest|app|generated)/', '-cli\\.ts$'] },
      to: { path: FEATURE, pathNot: '^src/$1/' },
    },
    {
      name: 'graphql-below-http',
      severity: 'error',
      comment: 'src/graphql assembles the features; it never imports the HTTP layer or the app.',
      from: { path: '^src/graphql/' },
      to: { path: `^src/rest/|${APP}` },
    },
    {
      name: 'http-on-graphql-only',
      severity: 'error',
      comment:
        'src/rest translates HTTP into GraphQL operations: it imports core, config and src/graphql only.',
      from: { path: '^src/rest/' },
      to: { path: '^src/', pathNot: '^src/(core/|graphql/|rest/|generated/|config\\.ts$)' },
    },
    {
      name: 'app-on-top',
      severity: 'error',
      comment: 'Nothing but the app imports the app.',
      from: { path: '^src/', pathNot: APP },
      to: { path: APP },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
