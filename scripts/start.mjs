// `npm start` and the CLIs: `node --no-node-snapshot scripts/start.mjs [entry] [args...]` builds dist/ when it is
// missing or stale, then runs dist/<entry>.js (default main) in this process, so signals reach the server directly.
// The entry is removed from process.argv, so the program sees its own arguments at process.argv.slice(2).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DIST, ensureBuild } from './build-lib.mjs';

const ENTRIES = new Set(['main', 'terminology/import-cli', 'auth/project-cli']);
const entry = process.argv[2] && ENTRIES.has(process.argv[2]) ? process.argv.splice(2, 1)[0] : 'main';
await ensureBuild();
await import(pathToFileURL(path.join(DIST, `${entry}.js`)).href);
