// PostgreSQL suite: every server test of the default suite against TEST_DATABASE_URL, plus *.pg.test.ts (several
// server processes on one database). Each test file gets its own PostgreSQL schema. Unit and embedded-only files
// (see the tiers in vitest.config.ts) run in the default suite alone: the database server changes nothing there.
import { defineConfig } from 'vitest/config';
import { shared } from './vitest.config.js';

if (!process.env.TEST_DATABASE_URL) {
  throw new Error('Set TEST_DATABASE_URL, e.g. postgresql://postgres@127.0.0.1:5432/test');
}

// Server files whose subject never reaches the database, run in the default suite only (CI's budget, ~100 s):
// the docs' commands (they start the embedded default whatever the suite), HTTP framing and CORS.
const SAME_ON_ANY_DATABASE = [
  'test/docs.test.ts',
  'test/attacks/slow-clients.test.ts',
  'test/attacks/compressed-bodies.test.ts',
  'test/rest/cors.test.ts',
];

export default defineConfig({
  ...shared,
  test: {
    ...shared.test,
    exclude: [
      'node_modules/**',
      'test/**/*.unit.test.ts',
      'test/**/*.embedded.test.ts',
      ...SAME_ON_ANY_DATABASE,
    ],
  },
});
