// PostgreSQL suite: every suite of the default run against TEST_DATABASE_URL, plus *.pg.test.ts (several server
// processes on one database). Each test file gets its own PostgreSQL schema.
import { defineConfig } from 'vitest/config';

if (!process.env.TEST_DATABASE_URL) {
  throw new Error('Set TEST_DATABASE_URL, e.g. postgresql://postgres@127.0.0.1:5432/test');
}

export default defineConfig({
  // graphql@16 ships CJS (main) and ESM (module); Node loads the CJS build for the libraries, so the tests must
  // too, or two copies of graphql meet ("Cannot use GraphQLSchema from another module or realm").
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['test/**/*.test.ts'],
    // GraphiQL's browser test does not depend on the database: it runs once, in the default suite. Studio's does.
    exclude: ['node_modules/**', 'test/browser/graphiql.test.ts'],
    pool: 'forks',
    // isolated-vm on Node 20+ needs the startup snapshot off (see its README).
    execArgv: ['--no-node-snapshot'],
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    setupFiles: ['test/helpers/setup.ts'],
  },
});
