// The software as the CapabilityStatement and TerminologyCapabilities name it: read once from package.json (from
// src/fhir or dist/fhir alike), so a release changes one file.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Name, version and release date of this server. */
export interface Software {
  name: string;
  version: string;
  releaseDate: string;
}

const read = (): Software => {
  const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json');
  const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Software>;
  return {
    name: pkg.name ?? 'fhir-server',
    version: pkg.version ?? '0.0.0',
    releaseDate: pkg.releaseDate ?? '2026-01-01',
  };
};

/** This server's software facts. */
export const SOFTWARE: Readonly<Software> = Object.freeze(read());
