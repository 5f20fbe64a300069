// The production build, shared by `npm run build`, `npm start` (builds when dist/ is missing or stale) and the test
// helpers (they start dist/main.js when it is fresh). Plain JavaScript: it must run with `node` alone, after
// `npm ci --omit=dev` (esbuild and prisma are dependencies; tsc, tsx and graphql-codegen are not needed).
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Output directory: one .js file per src/ file, same relative paths (so ../../prisma/migrations still resolves). */
export const DIST = path.join(ROOT, 'dist');
/** File name of the prebuilt HL7 isolate script, written next to dist/bots/hl7/bundle.js. */
export const HL7_SCRIPT = 'hl7-isolate.js';
const STAMP = path.join(DIST, '.build-stamp');
const PRISMA_SCHEMA = path.join(ROOT, 'prisma', 'schema.prisma');
const PRISMA_CLIENT = path.join(ROOT, 'src', 'generated', 'prisma', 'client.ts');

/** Files under dir (recursive), sorted, relative to ROOT. */
function listFiles(dir, skip) {
  const out = [];
  const walk = (d) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (skip(full)) continue;
      if (entry.isDirectory()) walk(full);
      else out.push(path.relative(ROOT, full));
    }
  };
  walk(dir);
  return out.sort();
}

/** TypeScript sources to compile: src/ except the Prisma output (generated from the schema, hashed through it). */
function sources() {
  const generated = path.join(ROOT, 'src', 'generated', 'prisma');
  const pothosTypes = path.join(ROOT, 'src', 'generated', 'pothos-types.ts');
  return listFiles(path.join(ROOT, 'src'), (f) => f === generated || f === pothosTypes);
}

/** Hash of everything the build reads: sources, the Prisma schema, the lockfile and this script. Content, not
 * mtimes: a checkout or a copy changes mtimes without changing what would be built. */
export function inputHash() {
  const hash = crypto.createHash('sha256');
  const migrations = listFiles(path.join(ROOT, 'prisma', 'migrations'), () => false);
  const files = [
    ...sources(),
    'prisma/schema.prisma',
    ...migrations,
    'package-lock.json',
    'scripts/build-lib.mjs',
  ];
  for (const rel of files) {
    const full = path.join(ROOT, rel);
    hash.update(rel).update('\0');
    hash.update(fs.existsSync(full) ? fs.readFileSync(full) : '(missing)').update('\0');
  }
  return hash.digest('hex');
}

/** True when dist/ was built from exactly the current inputs. */
export function isBuildFresh() {
  try {
    return fs.readFileSync(STAMP, 'utf8').trim() === inputHash();
  } catch {
    return false;
  }
}

/** Runs `prisma generate` when the generated client is missing or older than the schema (the postinstall script
 * generates it too; this covers a schema edited since). */
function generatePrisma(log) {
  const stale =
    !fs.existsSync(PRISMA_CLIENT) || fs.statSync(PRISMA_CLIENT).mtimeMs < fs.statSync(PRISMA_SCHEMA).mtimeMs;
  if (!stale) return;
  log('prisma generate');
  const bin = path.join(ROOT, 'node_modules', '.bin', process.platform === 'win32' ? 'prisma.cmd' : 'prisma');
  const r = spawnSync(bin, ['generate'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`prisma generate failed (exit ${r.status ?? r.signal})`);
}

/** Builds dist/: Prisma client if stale, every src/*.ts to ESM JavaScript, the HL7 isolate script; then the stamp. */
export async function build({ log = (m) => process.stderr.write(`build: ${m}\n`) } = {}) {
  const started = Date.now();
  const gql = path.join(ROOT, 'src', 'generated', 'gql', 'index.ts');
  if (!fs.existsSync(gql))
    throw new Error('src/generated/gql is missing (it is committed; run `npm run codegen`)');
  generatePrisma(log);
  if (!fs.existsSync(path.join(ROOT, 'src', 'generated', 'fhir-validators.ts'))) {
    log('fhir-validators');
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'fhir-validators.mjs')], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (r.status !== 0) throw new Error(`scripts/fhir-validators.mjs failed (exit ${r.status ?? r.signal})`);
  }
  const hash = inputHash();
  const esbuild = await import('esbuild');
  fs.rmSync(DIST, { recursive: true, force: true });
  const entryPoints = listFiles(path.join(ROOT, 'src'), () => false).filter(
    (f) => f.endsWith('.ts') && !f.endsWith('.d.ts'),
  );
  // Per file, not bundled: as fast to import as one bundle (measured in the commit), paths relative to
  // import.meta.url keep working, and stack traces name our files.
  await esbuild.build({
    entryPoints: entryPoints.map((f) => path.join(ROOT, f)),
    outdir: DIST,
    outbase: path.join(ROOT, 'src'),
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  // dist/ is ESM whatever the nearest package.json says.
  fs.writeFileSync(path.join(DIST, 'package.json'), '{ "type": "module" }\n');
  // The HL7 isolate script, built once here instead of at every start (bundle.js reads it when present).
  const bundle = await import(pathToFileURL(path.join(DIST, 'bots', 'hl7', 'bundle.js')).href);
  fs.writeFileSync(path.join(DIST, 'bots', 'hl7', HL7_SCRIPT), await bundle.hl7IsolateSource());
  pgliteTemplates(log);
  fs.writeFileSync(STAMP, `${hash}\n`);
  log(`${entryPoints.length} files -> dist/ in ${Date.now() - started} ms`);
}

/** The embedded database's templates (src/pglite-template-cli.ts), in a child process: initdb holds ~900 MB at
 * its peak. Without them a server still starts, through initdb and the migrations: a failure only warns. */
function pgliteTemplates(log) {
  const t0 = Date.now();
  const r = spawnSync(
    process.execPath,
    ['--no-node-snapshot', path.join(DIST, 'pglite-template-cli.js'), path.join(DIST, 'pglite-template')],
    { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  if (r.status !== 0) log(`warning: no embedded database templates (exit ${r.status ?? r.signal})`);
  else log(`embedded database templates in ${Date.now() - t0} ms`);
}

/** Builds unless dist/ is fresh. */
export async function ensureBuild(opts) {
  if (!isBuildFresh()) await build(opts);
}
