// `node dist/pglite-template-cli.js <out>`, run by `npm run build`: makes the embedded database's templates
// (src/db/pglite-template.ts) once, so that a server starting on an empty data directory copies one instead of
// running initdb, the migrations and the core terminology load: `schema` (migrated) and `core` (migrated, with the
// FHIR R4 core terminology of the installed definitions).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { openDatabase } from './db/database.js';
import { currentManifest, TEMPLATE_ROOT, writeManifest } from './db/pglite-template.js';
import { coreTerminologyMarker, loadCoreTerminology } from './terminology/core.js';

const out = path.resolve(process.argv[2] ?? TEMPLATE_ROOT);
const logger = pino({ level: 'warn' });
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pglite-template-'));
const staging = `${out}.making`;
try {
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  // Closed between the steps: a template is a cleanly shut down data directory.
  const open = () => openDatabase({ dataDir: work, fsync: false, logger });
  const schema = await open();
  await schema.close();
  fs.cpSync(path.join(work, 'pglite'), path.join(staging, 'schema'), { recursive: true });
  const core = await open();
  await loadCoreTerminology(core, logger);
  await core.close();
  fs.cpSync(path.join(work, 'pglite'), path.join(staging, 'core'), { recursive: true });
  writeManifest(
    staging,
    currentManifest({ schema: { facts: {} }, core: { facts: { coreTerminology: coreTerminologyMarker() } } }),
  );
  fs.rmSync(out, { recursive: true, force: true });
  fs.renameSync(staging, out);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(staging, { recursive: true, force: true });
}
