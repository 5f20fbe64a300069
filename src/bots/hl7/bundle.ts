// Builds message.ts into one self-contained plain script for the bot isolate (isolated-vm has no modules and
// no Node APIs). Evaluating the script defines globalThis.Hl7Message, Hl7Segment, Hl7Field, Hl7Context,
// Hl7ParseError, AckCode, isAckCode, parseHl7Message, isHl7Message, parseHl7DateTime, formatHl7DateTime and
// globalThis.__medplumHl7 (all of them in one frozen object). `npm run build` writes it to dist/bots/hl7/
// hl7-isolate.js and the built server reads that file; run from source (tsx, vitest) it is built with esbuild on
// first use (about 0.3-1 s) and cached for the process.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as esbuild from 'esbuild';

/** Globals the isolate script defines (besides __medplumHl7). */
export const HL7_ISOLATE_GLOBALS = [
  'AckCode',
  'Hl7Context',
  'Hl7Field',
  'Hl7Message',
  'Hl7ParseError',
  'Hl7Segment',
  'formatHl7DateTime',
  'isAckCode',
  'isHl7Message',
  'parseHl7DateTime',
  'parseHl7Message',
] as const;

/** Name of the global holding all HL7 exports, for mapping require('@medplum/core') inside the isolate. */
export const HL7_ISOLATE_NAMESPACE = '__medplumHl7';

/** The script written by the production build next to this file (scripts/build-lib.mjs HL7_SCRIPT), if any. */
function prebuilt(): string | undefined {
  const path = fileURLToPath(new URL('./hl7-isolate.js', import.meta.url));
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

/** esbuild, loaded only when there is no prebuilt script (it is not needed at run time after a build). */
function loadEsbuild(): typeof esbuild {
  return createRequire(import.meta.url)('esbuild') as typeof esbuild;
}

function entryPoint(): string {
  // Run from source (tsx, vitest) the entry is .ts; a compiled build would have .js next to this file.
  for (const name of ['isolate-entry.ts', 'isolate-entry.js']) {
    const path = fileURLToPath(new URL(`./${name}`, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('HL7 isolate bundle: isolate-entry.ts not found next to bundle.ts');
}

function buildOptions(): esbuild.BuildOptions & { write: false } {
  return {
    entryPoints: [entryPoint()],
    bundle: true,
    format: 'iife',
    platform: 'neutral',
    target: 'es2022',
    write: false,
    keepNames: true,
    legalComments: 'none',
    logLevel: 'silent',
  };
}

function finish(result: esbuild.BuildResult<{ write: false }>): string {
  const file = result.outputFiles[0];
  if (!file) throw new Error('HL7 isolate bundle: esbuild produced no output');
  return `${file.text}//# sourceURL=medplum-hl7.js\n`;
}

let cachedSource: string | undefined;
let pendingSource: Promise<string> | undefined;

/** The isolate script (async build, cached; concurrent callers share one build). */
export async function hl7IsolateSource(): Promise<string> {
  if (cachedSource !== undefined) return cachedSource;
  cachedSource = prebuilt();
  if (cachedSource !== undefined) return cachedSource;
  pendingSource ??= loadEsbuild()
    .build(buildOptions())
    .then(
      (result) => (cachedSource = finish(result)),
      (error: unknown) => {
        pendingSource = undefined;
        throw error;
      },
    );
  return pendingSource;
}

/** The isolate script, synchronously (esbuild.buildSync on first call, then the same cache). */
export function hl7IsolateSourceSync(): string {
  cachedSource ??= prebuilt() ?? finish(loadEsbuild().buildSync(buildOptions()));
  return cachedSource;
}
