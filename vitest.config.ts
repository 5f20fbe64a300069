// Default suite: embedded PGlite only, no database server needed. With TEST_DATABASE_URL set, the same suites run
// on PostgreSQL (see vitest.pg.config.ts), plus the multi-instance tests that need a shared server.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // graphql@16 ships CJS (main) and ESM (module); Node loads the CJS build for the libraries, so the tests must
  // too, or two copies of graphql meet ("Cannot use GraphQLSchema from another module or realm").
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/**/*.pg.test.ts', 'node_modules/**'],
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
