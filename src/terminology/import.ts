// Bulk import of CodeSystems and ValueSets from files: a FHIR JSON resource, a Bundle (collection/transaction/
// batch/searchset) or NDJSON (one resource per line). Each resource is written in its own transaction; the same
// url+version in the target project is replaced (re-running an import does not duplicate). Concepts go in through
// batched unnest() inserts. Memory: NDJSON is streamed line by line and Bundles entry by entry (a small scanner, as
// no streaming JSON parser is installed); a single resource file is parsed whole, then a CodeSystem's concept tree
// is flattened and dropped before its rows are inserted in batches.
import fs from 'node:fs';
import readline from 'node:readline';
import type { Database } from '../db/database.js';
import { ApiError } from '../core/errors.js';
import { CodeSystemIndex } from './engine/code-system-index.js';
import { codeSystemMetaOf, flattenCodeSystemConcepts } from './engine/flatten.js';
import { writeIndexFile } from './engine/index-file.js';
import type { CodeSystemResource, ConceptInput } from './engine/types.js';
import { validateCodeSystem, validateValueSet, type TerminologyType } from './repository.js';
import { CHANGED_CHANNEL, indexFileOf, indexStamp } from './service.js';
import { ConceptGenerations } from './generations.js';
import { writeTerminologyResource } from './resource-write.js';

export interface ImportProgress {
  /** A resource is about to be written (concepts: its concept count, 0 for a ValueSet). */
  onResourceStart?(type: TerminologyType, url: string | undefined, concepts: number): void;
  /** Concepts of the current resource written so far. */
  onConcepts?(done: number): void;
  onResourceDone?(result: ImportedResource): void;
}

export interface ImportOptions {
  /** Where the server keeps index files (the CLI passes DATA_DIR/terminology-index; none: no file is written): a CodeSystem
   * of 10,000 concepts or more gets its index written there, so the server's first request after the import does
   * not build it. */
  indexDir?: string;
}

export interface ImportedResource {
  type: TerminologyType;
  id: string;
  url?: string;
  version?: string;
  concepts: number;
  created: boolean;
}

export interface ImportResult {
  resources: ImportedResource[];
  skipped: Array<{ where: string; reason: string }>;
}

/** The project an import goes to: the given one, the shared core (null), or the first project. */
export async function resolveImportProject(
  db: Database,
  opts: { project?: string; shared?: boolean },
): Promise<string | null> {
  if (opts.shared) return null;
  if (opts.project) {
    const rows = await db.sql(`SELECT id FROM "Project" WHERE id::text = $1`, [opts.project]);
    if (rows.length === 0) throw new Error(`Project ${opts.project} does not exist`);
    return opts.project;
  }
  const [first] = await db.sql<{ id: string }>(`SELECT id FROM "Project" ORDER BY "createdAt", id LIMIT 1`);
  if (!first)
    throw new Error('There is no project yet: start the server once (it creates one), or use --shared');
  return first.id;
}

/** Reads resources from a file: NDJSON streamed by line, JSON parsed (Bundles give their entries). */
export async function* readResources(file: string): AsyncGenerator<{ where: string; resource: unknown }> {
  if (/\.(ndjson|jsonl)$/i.test(file)) {
    const rl = readline.createInterface({ input: fs.createReadStream(file, 'utf8'), crlfDelay: Infinity });
    let line = 0;
    for await (const text of rl) {
      line++;
      if (text.trim() === '') continue;
      yield { where: `${file}:${line}`, resource: parseJson(text, `${file}:${line}`) };
    }
    return;
  }
  if (startsAsBundle(file)) {
    yield* streamBundleEntries(file);
    return;
  }
  const parsed = parseJson(fs.readFileSync(file, 'utf8'), file) as { resourceType?: string; entry?: unknown };
  if (parsed && parsed.resourceType === 'Bundle') {
    const entries = Array.isArray(parsed.entry) ? (parsed.entry as Array<{ resource?: unknown }>) : [];
    // Entries are handed out and released one by one, so the Bundle shrinks as the import goes.
    for (let i = 0; i < entries.length; i++) {
      const resource = entries[i]?.resource;
      (entries as unknown[])[i] = undefined;
      yield { where: `${file} entry[${i}]`, resource };
    }
    return;
  }
  yield { where: file, resource: parsed };
}

/** True when the file's first 4 KB say it is a Bundle (resourceType first, as FHIR servers write them). */
function startsAsBundle(file: string): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(4096);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return /^\s*\{\s*"resourceType"\s*:\s*"Bundle"/.test(buf.toString('utf8', 0, n));
  } finally {
    fs.closeSync(fd);
  }
}

/** The resources of a Bundle file's `entry` array, one at a time, without parsing the whole file: a small scanner
 * tracks strings and nesting, cuts out each entry object and parses only that (memory: the largest entry). */
async function* streamBundleEntries(file: string): AsyncGenerator<{ where: string; resource: unknown }> {
  let depth = 0;
  let inString = false;
  let escape = false;
  let stringStart = -1;
  let lastString = '';
  let key = '';
  let inEntries = false;
  let capturing = false;
  let parts: string[] = [];
  let index = 0;
  const stringParts: string[] = [];
  for await (const chunk of fs.createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 16 })) {
    const text = chunk as string;
    const done: string[] = [];
    let start = capturing ? 0 : -1;
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (inString) {
        if (escape) escape = false;
        else if (ch === 92 /* \ */) escape = true;
        else if (ch === 34 /* " */) {
          inString = false;
          if (depth === 1 && stringStart >= 0) {
            stringParts.push(text.slice(stringStart, i));
            lastString = stringParts.join('');
            stringParts.length = 0;
            stringStart = -1;
          }
        }
        continue;
      }
      switch (ch) {
        case 34:
          inString = true;
          if (depth === 1) stringStart = i + 1;
          break;
        case 58 /* : */:
          if (depth === 1) key = lastString;
          break;
        case 123 /* { */:
        case 91 /* [ */:
          if (depth === 1 && ch === 91 && key === 'entry') inEntries = true;
          else if (depth === 2 && inEntries && ch === 123) {
            capturing = true;
            start = i;
          }
          depth++;
          break;
        case 125 /* } */:
        case 93 /* ] */:
          depth--;
          if (depth === 2 && capturing && ch === 125) {
            parts.push(text.slice(start, i + 1));
            done.push(parts.join(''));
            parts = [];
            capturing = false;
            start = -1;
          } else if (depth === 1 && inEntries) inEntries = false;
          break;
      }
    }
    if (capturing && start >= 0) parts.push(text.slice(start));
    if (inString && depth === 1 && stringStart >= 0) {
      stringParts.push(text.slice(stringStart));
      stringStart = 0;
    }
    for (const entryText of done) {
      const where = `${file} entry[${index++}]`;
      const entry = parseJson(entryText, where) as { resource?: unknown } | null;
      yield { where, resource: entry?.resource };
    }
  }
  if (depth !== 0 || inString) throw new Error(`${file}: not valid JSON (truncated)`);
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${where}: not valid JSON (${(err as Error).message})`);
  }
}

/** Imports every CodeSystem/ValueSet of the files into a project (null = shared); other types are skipped. */
export async function importFiles(
  db: Database,
  files: string[],
  projectId: string | null,
  progress: ImportProgress = {},
  options: ImportOptions = {},
): Promise<ImportResult> {
  const result: ImportResult = { resources: [], skipped: [] };
  // Concepts are written as complete generations, as the server writes them (README "Terminology", Storage).
  const generations = new ConceptGenerations(db);
  try {
    for (const file of files) {
      for await (const { where, resource } of readResources(file)) {
        const r = resource as Record<string, unknown> | undefined;
        const type = r?.resourceType;
        if (type !== 'CodeSystem' && type !== 'ValueSet') {
          result.skipped.push({ where, reason: `not a CodeSystem or ValueSet (${String(type)})` });
          continue;
        }
        try {
          result.resources.push(await importOne(db, generations, type, r!, projectId, progress, options));
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          result.skipped.push({ where, reason: err.message });
        }
      }
    }
  } finally {
    // Running servers (PostgreSQL) drop what they cached; a PGlite server is not running during an import.
    if (result.resources.length > 0) await db.notify(CHANGED_CHANNEL, '*').catch(() => undefined);
    // The generations the import replaced are removed before it ends.
    await generations.sweepNow();
  }
  return result;
}

async function importOne(
  db: Database,
  generations: ConceptGenerations,
  type: TerminologyType,
  resource: Record<string, unknown>,
  projectId: string | null,
  progress: ImportProgress,
  options: ImportOptions,
): Promise<ImportedResource> {
  let concepts: ConceptInput[] | undefined;
  if (type === 'CodeSystem') {
    validateCodeSystem(resource as unknown as CodeSystemResource);
    concepts = flattenCodeSystemConcepts(resource as unknown as CodeSystemResource);
    // The tree is no longer needed: let it be collected while the rows are written.
    delete resource.concept;
  } else validateValueSet(resource);
  const url = typeof resource.url === 'string' ? resource.url : undefined;
  const version = typeof resource.version === 'string' ? resource.version : undefined;
  progress.onResourceStart?.(type, url, concepts?.length ?? 0);
  const saved = await writeTerminologyResource(db, generations, type, resource, {
    projectId,
    replaceSame: true,
    concepts,
    onProgress: progress.onConcepts,
  });
  if (concepts && concepts.length >= 10_000 && options.indexDir) {
    await writeImportedIndex(
      db,
      options.indexDir,
      saved.id,
      resource as unknown as CodeSystemResource,
      concepts,
    );
  }
  const done: ImportedResource = {
    type,
    id: saved.id,
    url,
    version,
    concepts: concepts?.length ?? 0,
    created: saved.created,
  };
  progress.onResourceDone?.(done);
  return done;
}

/** Builds the index of an imported CodeSystem from the concepts in hand and writes the server's index file. */
async function writeImportedIndex(
  db: Database,
  dir: string,
  id: string,
  resource: CodeSystemResource,
  concepts: ConceptInput[],
): Promise<void> {
  const [row] = await db.sql<{ versionId: number; lastUpdated: string }>(
    `SELECT "versionId", to_char("updatedAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "lastUpdated"
     FROM "CodeSystem" WHERE id = $1::uuid`,
    [id],
  );
  if (!row) return;
  const index = CodeSystemIndex.build(codeSystemMetaOf(resource, id, row.versionId), concepts);
  await writeIndexFile(indexFileOf(dir, id), index, indexStamp(id, row.versionId, row.lastUpdated));
}
