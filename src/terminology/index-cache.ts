// The code system indexes one server instance holds: one per CodeSystem row, of its current versionId, shared by
// every project that sees it. An index is read back from its file (DATA_DIR/terminology-index) or built from the
// live concept generation's rows a page at a time; the memory they take together stays within a budget (the least
// recently resolved dropped first), and the large ones are indexed in the background at start.
import path from 'node:path';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import { readConceptPages } from './concept-pages.js';
import {
  CodeSystemIndexBuilder,
  codeSystemMetaOf,
  readIndexFile,
  warmFilterPaths,
  writeIndexFile,
  type CodeSystemIndex,
  type CodeSystemResource,
  type ConceptInput,
} from './engine/index.js';
import type { ConceptGenerations } from './generations.js';
import { ROW_COLUMNS, rowToResource, type ResourceRow } from './repository.js';

/** Smaller code systems build in a few milliseconds: no index file for them (the server's or the import's). */
export const MIN_FILE_CONCEPTS = 10_000;

/** An index file's name for a CodeSystem row, and the stamp that says which stored version it holds. */
export function indexFileOf(dir: string, id: string): string {
  return path.join(dir, `${id}.csix`);
}
export function indexStamp(id: string, versionId: number, lastUpdated: string | undefined): string {
  return `${id}/${versionId}/${lastUpdated ?? ''}`;
}

/** A stored CodeSystem, as much of it as indexing needs. */
export interface CodeSystemRef {
  id: string;
  versionId: number;
  lastUpdated?: string;
  resource: CodeSystemResource;
}

/** The ref of a CodeSystem row. */
export function refOf(row: ResourceRow): CodeSystemRef {
  return {
    id: row.id,
    versionId: row.versionId,
    lastUpdated: row.lastUpdated,
    resource: rowToResource('CodeSystem', row) as unknown as CodeSystemResource,
  };
}

/** Where indexes are kept and how much memory they may take. */
export interface IndexCacheOptions {
  /** A folder for index files (DATA_DIR/terminology-index): an index is read back from there after a restart
   * instead of being rebuilt from the database. None: always built from the database. */
  indexDir?: string;
  /** Memory budget of the code system indexes held (bytes): beyond it the least recently resolved ones are
   * dropped (and rebuilt or read back from their file when next used). Default 1 GiB. */
  indexBudgetBytes?: number;
  /** Code systems with at least this many concepts are indexed in the background at start (and get an index
   * file). Default 50,000. */
  warmMinConcepts?: number;
}

interface IndexEntry {
  versionId: number;
  index: Promise<CodeSystemIndex>;
  bytes: number;
  lastUse: number;
}

/** The indexes held, by CodeSystem row id. */
export class IndexCache {
  private readonly indexes = new Map<string, IndexEntry>();
  private indexUse = 0;

  /**
   * `generation` changes whenever a CodeSystem or ValueSet may have changed (an index built meanwhile is not kept);
   * `dropped` is told of an index dropped for the budget (whatever holds it should let it go too).
   */
  constructor(
    private readonly db: Database,
    private readonly generations: ConceptGenerations,
    private readonly logger: Logger,
    private readonly opts: IndexCacheOptions,
    private readonly generation: () => number,
    private readonly dropped: (index: CodeSystemIndex) => void,
  ) {}

  /** The index of a stored CodeSystem's version: held, read back from its file, or built. */
  indexOf(ref: CodeSystemRef): Promise<CodeSystemIndex> {
    const cached = this.indexes.get(ref.id);
    if (cached && cached.versionId === ref.versionId) {
      cached.lastUse = ++this.indexUse;
      return cached.index;
    }
    const gen = this.generation();
    const index = this.buildIndex(ref);
    const entry: IndexEntry = { versionId: ref.versionId, index, bytes: 0, lastUse: ++this.indexUse };
    this.indexes.set(ref.id, entry);
    index.then(
      (idx) => {
        // Built from rows that may predate a change seen meanwhile: keep it only for this call.
        if (gen !== this.generation() && this.indexes.get(ref.id) === entry) this.indexes.delete(ref.id);
        entry.bytes = idx.memoryEstimateBytes();
        this.evictOverBudget(entry);
      },
      () => {
        if (this.indexes.get(ref.id) === entry) this.indexes.delete(ref.id);
      },
    );
    return index;
  }

  /** Drops the index of a CodeSystem row (it changed). */
  delete(id: string): void {
    this.indexes.delete(id);
  }

  /** Drops every index. */
  clear(): void {
    this.indexes.clear();
  }

  /**
   * Reads back (or builds) the indexes of the code systems with at least `warmMinConcepts` concepts, one at a
   * time, most recently updated first, until the budget is used: the first request after a restart finds them
   * ready. Building reads the rows in batches and yields between them, so requests keep being served meanwhile.
   */
  async warm(): Promise<void> {
    const min = this.opts.warmMinConcepts ?? 50_000;
    const rows = await this.db.sql<ResourceRow & Record<string, unknown>>(
      `SELECT ${ROW_COLUMNS} FROM "CodeSystem" cs WHERE EXISTS
         (SELECT 1 FROM "ConceptGeneration" g WHERE g."codeSystemId" = cs.id AND g.state = 'live'
            AND g."conceptCount" >= $1)
       ORDER BY "updatedAt" DESC`,
      [min],
    );
    let bytes = 0;
    for (const row of rows) {
      if (bytes >= this.budget()) break;
      const index = await this.indexOf(refOf(row));
      bytes += index.memoryEstimateBytes();
    }
  }

  private budget(): number {
    return this.opts.indexBudgetBytes ?? 1024 * 1024 * 1024;
  }

  /** Drops the least recently resolved indexes (never `keep`) while the indexes held exceed the budget. */
  private evictOverBudget(keep: IndexEntry): void {
    const budget = this.budget();
    let total = 0;
    for (const e of this.indexes.values()) total += e.bytes;
    while (total > budget) {
      let oldest: [string, IndexEntry] | undefined;
      for (const kv of this.indexes) {
        if (kv[1] !== keep && kv[1].bytes > 0 && (!oldest || kv[1].lastUse < oldest[1].lastUse)) oldest = kv;
      }
      if (!oldest) return;
      this.indexes.delete(oldest[0]);
      total -= oldest[1].bytes;
      // Cached memberships hold their indexes: drop them too, or the memory stays.
      void oldest[1].index.then(this.dropped);
      this.logger.info(
        { codeSystem: oldest[0], bytes: oldest[1].bytes },
        'dropped a code system index (budget)',
      );
    }
  }

  /** Warms the filter paths on a big index in the background (warmFilterPaths): its first users' filters then
   * run optimised code. Requests arriving meanwhile are served in between its turns. */
  private optimise(index: CodeSystemIndex): void {
    warmFilterPaths(index).catch((err: unknown) =>
      this.logger.warn({ err }, 'could not warm the code system index filter paths'),
    );
  }

  private async buildIndex(ref: CodeSystemRef): Promise<CodeSystemIndex> {
    const started = Date.now();
    const meta = codeSystemMetaOf(ref.resource, ref.id, ref.versionId);
    const stamp = indexStamp(ref.id, ref.versionId, ref.lastUpdated);
    const file = this.opts.indexDir ? indexFileOf(this.opts.indexDir, ref.id) : undefined;
    if (file) {
      const read = await readIndexFile(file, stamp, meta);
      if (read) {
        if (read.size >= MIN_FILE_CONCEPTS) {
          this.logger.info(
            { codeSystem: ref.resource.url, concepts: read.size, ms: Date.now() - started },
            'read code system index file',
          );
          this.optimise(read);
        }
        return read;
      }
    }
    // The live generation's rows a page at a time (a turn for other requests between pages); pinned, so they
    // stay while read even if a write replaces them meanwhile (the result is then dropped, see indexOf).
    const builder = new CodeSystemIndexBuilder(meta);
    const [gen] = await this.db.sql<{ id: string; count: number }>(
      `SELECT id::text AS id, "conceptCount" AS count FROM "ConceptGeneration"
       WHERE "codeSystemId" = $1::uuid AND state = 'live'`,
      [ref.id],
    );
    if (gen) {
      await readConceptPages<ConceptRowDb>(
        this.db,
        this.generations,
        gen.id,
        // The definition's text is not indexed (leaving it out makes the load of a big code system cheaper): only
        // whether there is one, so that $lookup asks the database only for concepts that have one.
        `ordinal, code, display, parents, "notSelectable", inactive, status, designations, properties,
         definition IS NOT NULL AS "hasDefinition"`,
        gen.count,
        (rows) => {
          for (const r of rows) {
            builder.add({
              code: r.code,
              display: r.display,
              parents: r.parents ?? [],
              notSelectable: r.notSelectable,
              inactive: r.inactive,
              hasDefinition: r.hasDefinition,
              status: r.status,
              designations: parseJson(r.designations) as ConceptInput['designations'],
              properties: parseJson(r.properties) as ConceptInput['properties'],
            });
          }
        },
      );
    }
    const index = await builder.finishAsync();
    if (index.size >= MIN_FILE_CONCEPTS) {
      this.logger.info(
        { codeSystem: ref.resource.url, concepts: index.size, ms: Date.now() - started },
        'built code system index',
      );
      this.optimise(index);
      if (file) {
        writeIndexFile(file, index, stamp).catch((err: unknown) =>
          this.logger.warn({ err, file }, 'could not write the code system index file'),
        );
      }
    }
    return index;
  }
}

interface ConceptRowDb {
  ordinal: number;
  code: string;
  display: string | null;
  parents: string[] | null;
  notSelectable: boolean;
  inactive: boolean;
  status: string | null;
  designations: unknown;
  properties: unknown;
  hasDefinition: boolean;
}

/** A JSON column's value: parsed when the driver gives text (PGlite), as is otherwise. */
export function parseJson(v: unknown): unknown {
  return typeof v === 'string' ? JSON.parse(v) : (v ?? null);
}
