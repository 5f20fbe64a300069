// PGlite reads its WebAssembly (9 MB) and compiles it only when the database opens, after the server's modules have
// loaded. Started first thing in main.ts instead, the read and the compilation (V8 compiles on background threads)
// overlap with loading those modules (docs/performance.md, Start and memory). Its file-system bundle is left to
// PGlite: handing it over as a Blob cost more (~0.1 s of copying) than reading it.
import fs from 'node:fs/promises';

/** PGlite's artifacts, read and compiled ahead of the database's opening. */
export interface PGliteArtifacts {
  pgliteWasmModule: WebAssembly.Module;
}

let preloading: Promise<PGliteArtifacts | undefined> | undefined;

/** Starts reading and compiling PGlite's artifacts (once); failures are left to PGlite's own loading. */
export function preloadPGlite(): void {
  preloading ??= (async () => {
    const wasm = await fs.readFile(new URL('pglite.wasm', import.meta.resolve('@electric-sql/pglite')));
    return { pgliteWasmModule: await WebAssembly.compile(wasm) };
  })().catch(() => undefined);
}

/** The preloaded artifacts, if preloadPGlite was called and succeeded (handed to the first database opened). */
export async function takePreloadedPGlite(): Promise<PGliteArtifacts | undefined> {
  const p = preloading;
  preloading = undefined;
  return p;
}
