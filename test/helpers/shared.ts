// The workplace's shared folder (benchmark data generator, HL7 test suite) sits beside the repository:
// `../shared` from the repository root, or SHARED_DIR.
import path from 'node:path';

/** Absolute path of the shared folder. */
export const SHARED_DIR = path.resolve(
  process.env.SHARED_DIR ?? path.resolve(import.meta.dirname, '../../../shared'),
);

/** The standard synthetic code system generator (100,000 concepts by default). */
export const GENERATOR = path.join(SHARED_DIR, 'bench/gen-codesystem.mjs');
