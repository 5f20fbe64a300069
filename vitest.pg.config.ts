// PostgreSQL suite: every suite of the default run against TEST_DATABASE_URL, plus *.pg.test.ts (several server
// processes on one database). Each test file gets its own PostgreSQL schema.
import fs from 'node:fs';
import { defineConfig } from 'vitest/config';

/** Files the database server does not change the outcome of (see test/suites.json): the default suite runs them. */
const suites = JSON.parse(fs.readFileSync(new URL('./test/suites.json', import.meta.url), 'utf8')) as {
  noServer: string[];
  embeddedOnly: string[];
};

if (!process.env.TEST_DATABASE_URL) {
  throw new Error('Set TEST_DATABASE_URL, e.g. postgresql://postgres@127.0.0.1:5432/test');
}

export default defineConfig({
  // graphql@16 ships CJS (main) and ESM (module); Node loads the CJS build for the libraries, so the tests must
  // too, or two copies of graphql meet ("Cannot use GraphQLSchema from another module or realm").
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['test/**/*.test.ts'],
    // What does not depend on the database runs once, in the default suite (GraphiQL's browser test; not Studio's).
    exclude: ['node_modules/**', ...suites.noServer, ...suites.embeddedOnly],
    pool: 'forks',
    // Test files share their worker process (each still starts and closes its own servers): a fresh process per
    // file loaded every dependency again and compiled PGlite's WebAssembly again, about 3 s of CPU per file (ten
    // server files: 73 s of CPU isolated, 44 s shared).
    isolate: false,
    // isolated-vm on Node 20+ needs the startup snapshot off (see its README).
    execArgv: ['--no-node-snapshot'],
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    setupFiles: ['test/helpers/setup.ts'],
  },
});
