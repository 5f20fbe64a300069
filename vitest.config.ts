// Default suite: embedded PGlite only, no database server needed. The tier of a test file is in its name:
//   *.unit.test.ts      no server and no database (engine, sandbox, parsers): also run on Node 22 in CI
//   *.embedded.test.ts  the embedded database only, whatever the suite (its directory lock, the Prisma CLI,
//                       settings, GraphiQL's page)
//   *.test.ts           a real server: this suite on PGlite, vitest.pg.config.ts on PostgreSQL
//   *.pg.test.ts        several server instances on one PostgreSQL database (PostgreSQL suite only)
import { defineConfig } from 'vitest/config';

/** Options both suites share. */
export const shared = {
  // graphql@16 ships CJS (main) and ESM (module); Node loads the CJS build for the libraries, so the tests must
  // too, or two copies of graphql meet ("Cannot use GraphQLSchema from another module or realm").
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks' as const,
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
};

export default defineConfig({
  ...shared,
  test: { ...shared.test, exclude: ['test/**/*.pg.test.ts', 'node_modules/**'] },
});
