// The production build's treatment of the Prisma client (scripts/build-lib.mjs): its query compiler is read from a
// file in dist/vendor/ instead of a base64 string kept in memory. CI builds before the tests; a stale dist/ skips.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIST, isBuildFresh, PRISMA_WASM_FILE } from '../scripts/build-lib.mjs';

describe('the production build', () => {
  it.skipIf(!isBuildFresh())("loads Prisma's query compiler from its own file", async () => {
    const client = fs.readFileSync(path.join(DIST, 'generated', 'prisma', 'internal', 'class.js'), 'utf8');
    expect(client).not.toContain('wasm-base64');
    const wasm = fs.readFileSync(path.join(DIST, 'vendor', PRISMA_WASM_FILE));
    // A whole module: it compiles.
    await expect(WebAssembly.compile(wasm)).resolves.toBeInstanceOf(WebAssembly.Module);
  });
});
