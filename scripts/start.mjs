// `npm start` and the CLIs: `node --no-node-snapshot scripts/start.mjs [entry] [args...]` builds dist/ when it is
// missing or stale (in a child process, so no esbuild service stays attached to the server), then runs
// dist/<entry>.js (default main) in this process, so signals reach the server directly. The entry is removed from
// process.argv, so the program sees its own arguments at process.argv.slice(2).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DIST, isBuildFresh } from './build-lib.mjs';

const ENTRIES = new Set([
  'main',
  'terminology/import/cli',
  'auth/project-cli',
  'auth/reset-cli',
  'db/studio-cli',
]);
const entry = process.argv[2] && ENTRIES.has(process.argv[2]) ? process.argv.splice(2, 1)[0] : 'main';
if (!isBuildFresh()) {
  const script = fileURLToPath(new URL('./build.mjs', import.meta.url));
  const built = spawnSync(process.execPath, [script], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
await import(pathToFileURL(path.join(DIST, `${entry}.js`)).href);
