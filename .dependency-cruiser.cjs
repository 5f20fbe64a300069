// `npm run check:deps`: the dependency rule (docs/architecture.md), by layer rather than by file. Type-only
// imports count too (tsPreCompilationDeps). From the bottom:
//   core      src/core/, src/config.ts, src/config/  imports nothing of ours
//   db        src/db/                                -> core
//   fhir      src/fhir/: the resource model          -> core (FHIR shapes, the store contract, the registry)
//   features  every other folder (auth, bots, ...)   -> core, db, fhir
//   sides     a feature's (or fhir's) GraphQL side: graphql.ts, graphql-*.ts  -> also src/graphql (builder, context)
//   graphql   src/graphql/                           -> core, db, fhir, features and their GraphQL sides
//   http      src/rest/: HTTP plumbing               -> core, db, fhir, graphql
//   sides     a feature's (or fhir's) HTTP side: routes.ts, *-routes.ts, feature.ts  -> also src/rest, src/graphql
//   app       the files at src/ (server.ts, main.ts, ...)   -> anything; imported by nothing
// A feature never imports another feature (its process entry, a cli.ts or *-cli.ts file, may: it assembles a small
// app).

/** The layers that are not features. */
const LAYERS = 'config|core|db|fhir|graphql|rest|generated';
/** A folder that is no layer of its own is a feature. */
const FEATURE = `^src/(?!(?:${LAYERS})/)[^/]+/`;
/** The GraphQL side of a feature or of the resource model. */
const FEATURE_GRAPHQL = '^src/(?!(?:config|core|db|graphql|rest|generated)/)[^/]+/graphql(\\.|-[^/]*\\.)ts$';
/** The HTTP side of a feature or of the resource model: its routes and its wiring (feature.ts). */
const FEATURE_HTTP =
  '^src/(?!(?:config|core|db|graphql|rest|generated)/)[^/]+/(routes|[^/]+-routes|feature)\\.ts$';
/** The app: the files directly in src/ other than config.ts. */
const APP = '^src/(?!config\\.ts$)[^/]+\\.ts$';

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
      comment: 'src/core and the settings (src/config.ts, src/config/) import nothing of ours but core.',
      from: { path: '^src/(core/|config\\.ts$|config/)' },
      to: { path: '^src/', pathNot: '^src/(core|config)/' },
    },
    {
      name: 'db-on-core',
      severity: 'error',
      comment: 'The database layer imports only core and config.',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: '^src/(core/|db/|config\\.ts$|generated/)' },
    },
    {
      name: 'fhir-on-core',
      severity: 'error',
      comment:
        'The resource model (src/fhir) imports core and config; its GraphQL side also src/graphql, its HTTP side ' +
        'also src/rest.',
      from: { path: '^src/fhir/', pathNot: [FEATURE_GRAPHQL, FEATURE_HTTP] },
      to: { path: '^src/', pathNot: '^src/(core/|fhir/|config\\.ts$)' },
    },
    {
      name: 'feature-on-core-db-fhir',
      severity: 'error',
      comment:
        "A feature's domain code imports core, config, db, fhir and its own folder: no GraphQL, HTTP, app.",
      from: { path: FEATURE, pathNot: [FEATURE_GRAPHQL, FEATURE_HTTP] },
      to: { path: `^src/(graphql|rest)/|${APP}|${FEATURE_GRAPHQL}|${FEATURE_HTTP}` },
    },
    {
      name: 'feature-graphql-on-the-builder',
      severity: 'error',
      comment:
        'The GraphQL side adds to the builder and reads the context; it never imports HTTP or the app.',
      from: { path: FEATURE_GRAPHQL },
      to: { path: `^src/rest/|${APP}|${FEATURE_HTTP}` },
    },
    {
      name: 'feature-http-on-rest',
      severity: 'error',
      comment:
        "A feature's HTTP side (routes, wiring) translates requests into GraphQL operations with the src/rest " +
        "plumbing; only the app and the same feature's HTTP side import it.",
      from: { path: '^src/', pathNot: [APP, FEATURE_HTTP] },
      to: { path: FEATURE_HTTP },
    },
    {
      name: 'features-apart',
      severity: 'error',
      comment:
        'A feature does not import another (what they share is in core or fhir); a cli.ts or *-cli.ts entry may.',
      from: { path: '^src/([^/]+)/', pathNot: [`^src/(${LAYERS})/`, '[/-]cli\\.ts$'] },
      to: { path: FEATURE, pathNot: '^src/$1/' },
    },
    {
      name: 'graphql-below-http',
      severity: 'error',
      comment: 'src/graphql assembles the features; it never imports the HTTP layer or the app.',
      from: { path: '^src/graphql/' },
      to: { path: `^src/rest/|${APP}|${FEATURE_HTTP}` },
    },
    {
      name: 'http-on-graphql',
      severity: 'error',
      comment:
        'src/rest is HTTP plumbing: it imports core, config, fhir and src/graphql, and db for the Feature ' +
        'contract (a feature is built on the database); never a feature.',
      from: { path: '^src/rest/' },
      to: {
        path: '^src/',
        pathNot:
          '^src/(core/|db/|fhir/(?!(?:routes|[^/]+-routes|feature)\\.ts$)|graphql/|rest/|generated/|config\\.ts$)',
      },
    },
    {
      name: 'app-on-top',
      severity: 'error',
      comment: 'Nothing but the app imports the app.',
      from: { path: '^src/', pathNot: APP },
      to: { path: APP },
    },

    // The terminology engine behind its index.
    {
      name: 'engine-behind-its-index',
      severity: 'error',
      comment: 'Code outside src/terminology/engine/ reaches the engine through engine/index.ts only.',
      from: { path: '^src/', pathNot: '^src/terminology/engine/' },
      to: { path: '^src/terminology/engine/', pathNot: '^src/terminology/engine/index\\.ts$' },
    },
    {
      name: 'engine-imports-only-itself',
      severity: 'error',
      comment: 'The engine imports nothing outside its folder but packages (node_modules, node: built-ins).',
      from: { path: '^src/terminology/engine/' },
      to: { pathNot: ['^src/terminology/engine/', '(^|/)node_modules/'], dependencyTypesNot: ['core'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
