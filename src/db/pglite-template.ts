// Prebuilt embedded data directories (issue 27). A fresh PGlite data directory costs initdb (a second WebAssembly
// instance beside the first: ~5-9 s and ~900 MB at its peak), then the migrations, then the core terminology load.
// `npm run build` does that work once (src/pglite-template-cli.ts) and keeps the result under
// dist/pglite-template/<name>/; a server starting on an empty data directory copies the matching template instead,
// which costs what a restart costs. A template is used only when it was made by the installed PGlite with exactly
// this build's migrations (and whatever facts its caller names); otherwise the server initialises as before.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { listMigrations } from './migrate.js';

/** dist/pglite-template (from src/db or dist/db alike: the templates are made by the build). */
export const TEMPLATE_ROOT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'dist',
  'pglite-template',
);
const MANIFEST = 'manifest.json';

/** What a template was made with: the PGlite version, the migrations applied, and facts of its own. */
export interface TemplateManifest {
  pglite: string;
  migrations: string[];
  templates: Record<string, { facts: Record<string, string> }>;
}

/** A template to start an empty data directory from: its name and the facts it must have been made with. */
export interface TemplateChoice {
  name: string;
  facts?: Record<string, string>;
  /** Where the templates are (default: dist/pglite-template). */
  root?: string;
}

/** The installed PGlite's version (its package.json, found from its entry point). */
export function pgliteVersion(): string {
  const require = createRequire(import.meta.url);
  let dir = path.dirname(require.resolve('@electric-sql/pglite'));
  while (path.dirname(dir) !== dir) {
    const f = path.join(dir, 'package.json');
    if (fs.existsSync(f)) {
      const m = JSON.parse(fs.readFileSync(f, 'utf8')) as { name?: string; version?: string };
      if (m.name === '@electric-sql/pglite') return m.version ?? 'unknown';
    }
    dir = path.dirname(dir);
  }
  return 'unknown';
}

/** The manifest for templates made now, by this build. */
export function currentManifest(templates: TemplateManifest['templates']): TemplateManifest {
  return { pglite: pgliteVersion(), migrations: listMigrations().map((m) => m.name), templates };
}

/** The directory of a usable template, or undefined (none built, another PGlite, other migrations or facts). */
export function findTemplate(choice: TemplateChoice): string | undefined {
  const root = choice.root ?? TEMPLATE_ROOT;
  let manifest: TemplateManifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(root, MANIFEST), 'utf8')) as TemplateManifest;
  } catch {
    return undefined;
  }
  const now = currentManifest({});
  const entry = manifest.templates?.[choice.name];
  if (!entry || manifest.pglite !== now.pglite) return undefined;
  if (manifest.migrations.join('\n') !== now.migrations.join('\n')) return undefined;
  for (const [k, v] of Object.entries(choice.facts ?? {})) if (entry.facts[k] !== v) return undefined;
  const dir = path.join(root, choice.name);
  return fs.existsSync(path.join(dir, 'PG_VERSION')) ? dir : undefined;
}

/** Writes the manifest of the templates under root. */
export function writeManifest(root: string, manifest: TemplateManifest): void {
  fs.writeFileSync(path.join(root, MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
}

/** True when the PostgreSQL data directory pgdata has not been initialised and holds nothing (missing or empty). */
export function isEmptyDataDir(pgdata: string): boolean {
  try {
    return fs.readdirSync(pgdata).length === 0;
  } catch {
    return true;
  }
}

/** Copies a template into pgdata (which must be empty): into a sibling folder first, then renamed, so a crash of
 * the process half-way leaves no half-made database. Syncing the copy's ~1,100 files to disk took longer than the
 * copy itself (1.4 s on a busy machine), so it is left to `syncTree`, in the background. */
export function copyTemplate(template: string, pgdata: string): void {
  const staging = `${pgdata}.template-copy`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.cpSync(template, staging, { recursive: true });
  fs.rmSync(pgdata, { recursive: true, force: true });
  fs.renameSync(staging, pgdata);
}

/** Syncs every file under dir, and dir and its parent, to disk, one at a time off the event loop. */
export async function syncTree(dir: string): Promise<number> {
  let files = 0;
  const syncPath = async (p: string) => {
    const h = await fs.promises.open(p, 'r');
    try {
      await h.sync();
    } finally {
      await h.close();
    }
  };
  const walk = async (d: string): Promise<void> => {
    for (const entry of await fs.promises.readdir(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) await walk(full);
      else {
        await syncPath(full);
        files++;
      }
    }
    await syncPath(d);
  };
  await walk(dir);
  await syncPath(path.dirname(dir));
  return files;
}
