// `npm run import -- <file>... [--project <id> | --shared]`: imports CodeSystems and ValueSets (JSON resource,
// Bundle or NDJSON) into the database the server uses (DATA_DIR or DATABASE_URL/DATABASE_SCHEMA), with a progress
// bar. The embedded database (PGlite) is single-process: run this while the server is stopped, or POST through REST.
import cliProgress from 'cli-progress';
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { importFiles, resolveImportProject } from './import.js';

function usage(): never {
  process.stderr.write(
    'Usage: npm run import -- <file.json|file.ndjson>... [--project <projectId> | --shared]\n' +
      '  A FHIR CodeSystem/ValueSet, a Bundle of them, or NDJSON (one resource per line).\n' +
      '  Default target: the first project. --shared: the shared definitions every project sees.\n',
  );
  process.exit(2);
}

/** Parses argv, imports, prints a summary; exits non-zero on failure. */
async function main(argv: string[]): Promise<void> {
  const files: string[] = [];
  let project: string | undefined;
  let shared = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--project') project = argv[++i] ?? usage();
    else if (a === '--shared') shared = true;
    else if (a === '--help' || a === '-h') usage();
    else if (a.startsWith('--')) usage();
    else files.push(a);
  }
  if (files.length === 0 || (project && shared)) usage();

  const config = loadConfig(process.env);
  const started = Date.now();
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    dataDir: config.dataDir,
  });
  const bar = new cliProgress.SingleBar(
    { format: '{type} {url} [{bar}] {value}/{total} concepts | {eta_formatted} left', hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  let barActive = false;
  try {
    const projectId = await resolveImportProject(db, { project, shared });
    const result = await importFiles(db, files, projectId, {
      onResourceStart(type, url, concepts) {
        if (concepts >= 1000 && process.stderr.isTTY) {
          bar.start(concepts, 0, { type, url: url ?? '' });
          barActive = true;
        }
      },
      onConcepts(done) {
        if (barActive) bar.update(done);
      },
      onResourceDone(r) {
        if (barActive) {
          bar.stop();
          barActive = false;
        }
        process.stdout.write(
          `${r.created ? 'created' : 'replaced'} ${r.type}/${r.id} ${r.url ?? ''}${r.version ? `|${r.version}` : ''}` +
            `${r.type === 'CodeSystem' ? ` (${r.concepts} concepts)` : ''}\n`,
        );
      },
    });
    for (const s of result.skipped) process.stdout.write(`skipped ${s.where}: ${s.reason}\n`);
    const concepts = result.resources.reduce((n, r) => n + r.concepts, 0);
    process.stdout.write(
      `imported ${result.resources.length} resource(s), ${concepts} concept(s) into ` +
        `${projectId ? `project ${projectId}` : 'the shared definitions'} in ${Date.now() - started} ms; ` +
        `heap ${Math.round(process.memoryUsage().heapUsed / 1e6)} MB, rss ${Math.round(process.memoryUsage().rss / 1e6)} MB\n`,
    );
    if (result.skipped.length > 0) process.exitCode = 1;
  } finally {
    if (barActive) bar.stop();
    await db.close();
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`import failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
