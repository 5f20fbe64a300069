// `npm run import -- <file|folder|zip>... [--format rf2|loinc|icd10cm|fhir] [--language-refset <id>]
// [--project <id> | --shared]`: imports CodeSystems and ValueSets (JSON resource, Bundle or NDJSON) and terminology
// releases (a SNOMED CT RF2 Snapshot folder or zip; release/formats.ts lists the formats, detected by their files' names and
// first lines) into the database the server uses (DATA_DIR or DATABASE_URL/DATABASE_SCHEMA), with a progress
// bar on a terminal and a progress line every few seconds otherwise (CI logs, `nohup`). The embedded database (PGlite)
// is single-process: run this while the server is stopped, or POST through REST. On a database the server never
// started on, an import into the default target does what the first start does (migrations, first project, admin
// user, client application), so an import can come first.
import fs from 'node:fs';
import path from 'node:path';
import cliProgress from 'cli-progress';
import pino from 'pino';
import { loadConfig } from '../../config.js';
import { openDatabase } from '../../db/database.js';
import { bootstrap } from '../../auth/bootstrap.js';
import { importFiles, resolveImportProject, type ImportedResource, type ImportProgress } from './files.js';
import { folderFiles, singleFile } from './release/folder.js';
import { detectReleaseFormat, RELEASE_FORMATS, releaseFormatNamed } from './release/formats.js';
import type { ReleaseFiles, ReleaseFormat } from './release/types.js';
import { importRelease } from './release/write.js';
import { zipFiles } from './release/zip.js';

/** Resources with fewer concepts than this import without progress output (they take well under a second). */
const PROGRESS_MIN_CONCEPTS = 1000;

/** Progress on stderr for large resources: a bar on a terminal, otherwise a line at start, every `everyMs`, and
 * at the end. The import's own result lines go to stdout. */
export function progressReporter(
  out: NodeJS.WriteStream,
  everyMs = 5_000,
): Required<Pick<ImportProgress, 'onResourceStart' | 'onConcepts'>> & { done(): void } {
  const bar = new cliProgress.SingleBar(
    {
      format: '{type} {url} [{bar}] {value}/{total} concepts | {eta_formatted} left',
      hideCursor: true,
      stream: out,
    },
    cliProgress.Presets.shades_classic,
  );
  let current: { label: string; total: number; started: number; lastLine: number } | undefined;
  let barActive = false;
  const line = (done: number) => {
    const c = current!;
    const secs = ((Date.now() - c.started) / 1000).toFixed(1);
    if (c.total < 0) out.write(`${c.label}: ${done} concepts, ${secs} s\n`);
    else {
      const pct = Math.floor((100 * done) / c.total);
      out.write(`${c.label}: ${done}/${c.total} concepts (${pct}%), ${secs} s\n`);
    }
  };
  return {
    onResourceStart(type, url, concepts) {
      current = undefined;
      // concepts < 0: a streamed CodeSystem without `count` (its size is known at the end): lines without a total.
      if (concepts >= 0 && concepts < PROGRESS_MIN_CONCEPTS) return;
      current = {
        label: `${type} ${url ?? ''}`.trim(),
        total: concepts,
        started: Date.now(),
        lastLine: Date.now(),
      };
      if (out.isTTY && concepts >= 0) {
        bar.start(concepts, 0, { type, url: url ?? '' });
        barActive = true;
      } else {
        line(0);
      }
    },
    onConcepts(done) {
      if (!current) return;
      if (barActive) {
        // CodeSystem.count is only a claim: a bar never shows more than 100%.
        if (done > current.total) bar.setTotal(done);
        bar.update(done);
      } else if ((current.total >= 0 && done >= current.total) || Date.now() - current.lastLine >= everyMs) {
        current.lastLine = Date.now();
        line(done);
        if (current.total >= 0 && done >= current.total) current = undefined;
      }
    },
    done() {
      if (barActive) bar.stop();
      barActive = false;
      current = undefined;
    },
  };
}

function usage(): never {
  process.stderr.write(
    'Usage: npm run import -- <file|folder|zip>... [--format fhir|' +
      RELEASE_FORMATS.map((f) => f.name).join('|') +
      '] [--language-refset <sctid>] [--project <projectId> | --shared]\n' +
      '  A FHIR CodeSystem/ValueSet, a Bundle of them, or NDJSON (one resource per line); or a terminology release\n' +
      '  (a SNOMED CT RF2 release: its Snapshot files; a LOINC release: LoincTable/Loinc.csv and the answer lists;\n' +
      '  the ICD-10-CM tabular XML: a folder, a zip or the file), recognised by its files unless --format says.\n' +
      '  --language-refset: SNOMED CT language reference set of the displays (default SNOMED_LANGUAGE_REFSET, en-US).\n' +
      '  Default target: the first project. --shared: the shared definitions every project sees.\n',
  );
  process.exit(2);
}

/** What one command-line path is: FHIR JSON files, or a release in a format. */
type Input =
  | { kind: 'fhir'; file: string }
  | { kind: 'release'; files: ReleaseFiles & { close?(): void }; format: ReleaseFormat };

/** Decides how a path is read: --format, else a folder must be a release, a file a release when a format
 * recognises it (else FHIR JSON, as before releases). */
async function inputOf(p: string, format: string | undefined): Promise<Input> {
  const dir = fs.statSync(p).isDirectory();
  if (format === 'fhir') {
    if (dir || /\.zip$/i.test(p)) throw new Error(`${p}: --format fhir reads JSON/NDJSON files`);
    return { kind: 'fhir', file: p };
  }
  const files = dir ? folderFiles(p) : /\.zip$/i.test(p) ? await zipFiles(p) : singleFile(p);
  if (format) {
    const f = releaseFormatNamed(format);
    if (!f) throw new Error(`unknown --format ${format}`);
    return { kind: 'release', files, format: f };
  }
  if (!dir && /\.(json|ndjson)$/i.test(p)) return { kind: 'fhir', file: p };
  const found = await detectReleaseFormat(files);
  if (found) return { kind: 'release', files, format: found };
  if (dir || /\.zip$/i.test(p)) {
    throw new Error(
      `${p}: no release format recognised (${RELEASE_FORMATS.map((f) => f.name).join(', ')}); name it with --format`,
    );
  }
  return { kind: 'fhir', file: p };
}

/** Parses argv, imports, prints a summary; exits non-zero on failure. */
async function main(argv: string[]): Promise<void> {
  const paths: string[] = [];
  let project: string | undefined;
  let shared = false;
  let format: string | undefined;
  let languageRefset: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--project') project = argv[++i] ?? usage();
    else if (a === '--shared') shared = true;
    else if (a === '--format') format = argv[++i] ?? usage();
    else if (a === '--language-refset') languageRefset = argv[++i] ?? usage();
    else if (a === '--help' || a === '-h') usage();
    else if (a.startsWith('--')) usage();
    else paths.push(a);
  }
  if (paths.length === 0 || (project && shared)) usage();
  if (format && format !== 'fhir' && !releaseFormatNamed(format)) usage();
  const inputs: Input[] = [];
  for (const p of paths) inputs.push(await inputOf(p, format));

  const config = loadConfig(process.env);
  const started = Date.now();
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    dataDir: config.dataDir,
  });
  const progress = progressReporter(process.stderr);
  try {
    // The default target is the first project: on a database the server never started on, create it as the first
    // start does (a no-op once a project exists), with the ADMIN_*/CLIENT_* of this command's environment. Not for
    // --shared or --project: those need no first project, and the server's first start then uses its own settings.
    if (!shared && !project) await bootstrap(db, config, pino({ level: 'warn' }, pino.destination(2)));
    const projectId = await resolveImportProject(db, { project, shared });
    const resources: ImportedResource[] = [];
    const skipped: Array<{ where: string; reason: string }> = [];
    const reporting: ImportProgress = {
      onResourceStart: progress.onResourceStart,
      onConcepts: progress.onConcepts,
      onResourceDone(r) {
        progress.done();
        process.stdout.write(
          `${r.created ? 'created' : 'replaced'} ${r.type}/${r.id} ${r.url ?? ''}${r.version ? `|${r.version}` : ''}` +
            `${r.type === 'CodeSystem' ? ` (${r.concepts} concepts)` : ''}\n`,
        );
      },
    };
    // The embedded database is this process's alone during an import (its lock); on PostgreSQL the server may
    // be running, but its requests use their own connections.
    const options = { indexDir: path.join(config.dataDir, 'terminology-index'), exclusive: true };
    const fhirFiles = inputs.flatMap((i) => (i.kind === 'fhir' ? [i.file] : []));
    if (fhirFiles.length > 0) {
      const result = await importFiles(db, fhirFiles, projectId, reporting, options);
      resources.push(...result.resources);
      skipped.push(...result.skipped);
    }
    for (const input of inputs) {
      if (input.kind !== 'release') continue;
      const releaseOptions = { languageRefset: languageRefset ?? config.snomedLanguageRefset };
      resources.push(
        ...(await importRelease(
          db,
          input.files,
          input.format,
          releaseOptions,
          projectId,
          reporting,
          options,
        )),
      );
    }
    const result = { resources, skipped };
    for (const s of result.skipped) process.stdout.write(`skipped ${s.where}: ${s.reason}\n`);
    const concepts = result.resources.reduce((n, r) => n + r.concepts, 0);
    process.stdout.write(
      `imported ${result.resources.length} resource(s), ${concepts} concept(s) into ` +
        `${projectId ? `project ${projectId}` : 'the shared definitions'} in ${Date.now() - started} ms; ` +
        `heap ${Math.round(process.memoryUsage().heapUsed / 1e6)} MB, rss ${Math.round(process.memoryUsage().rss / 1e6)} MB\n`,
    );
    if (result.skipped.length > 0) process.exitCode = 1;
  } finally {
    progress.done();
    for (const input of inputs) if (input.kind === 'release') input.files.close?.();
    await db.close();
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`import failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
