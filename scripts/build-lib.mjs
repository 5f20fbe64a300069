// The production build, shared by `npm run build`, `npm start` (builds when dist/ is missing or stale) and the test
// helpers (they start dist/main.js when it is fresh). Plain JavaScript: it must run with `node` alone, after
// `npm ci --omit=dev` (esbuild and prisma are dependencies; tsc, tsx and graphql-codegen are not needed).
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Buffer } from 'node:buffer';
import { createRequire } from 'node:module';
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
  const vendorMs = await vendor(esbuild);
  log(`${VENDORED.length} packages -> dist/vendor/ in ${vendorMs} ms`);
  prismaCompilerAsFile(log);
  // The HL7 isolate script, built once here instead of at every start (bundle.js reads it when present).
  const bundle = await import(pathToFileURL(path.join(DIST, 'bots', 'hl7', 'bundle.js')).href);
  fs.writeFileSync(path.join(DIST, 'bots', 'hl7', HL7_SCRIPT), await bundle.hl7IsolateSource());
  pgliteTemplates(log);
  fs.writeFileSync(STAMP, `${hash}\n`);
  log(`${entryPoints.length} files -> dist/ in ${Date.now() - started} ms`);
}

/** Pure-JavaScript packages the server imports at every start, bundled into dist/vendor/ (one file each, their
 * shared dependencies in common chunks): resolving and reading their hundreds of small files cost ~0.4 s of each
 * start (graphql-yoga with its plugins ~290 ms, ~60 ms bundled). graphql is bundled with every package that
 * imports it (one copy of its classes: a second one would refuse the schema). Left as packages: those with native
 * or WebAssembly parts, those that find files beside themselves (pino's transports), those imported on demand. */
export const VENDORED = [
  'graphql',
  '@pothos/core',
  '@pothos/plugin-prisma',
  'express',
  'helmet',
  'graphql-yoga',
  '@graphql-yoga/plugin-csrf-prevention',
  '@escape.tech/graphql-armor-block-field-suggestions',
  '@escape.tech/graphql-armor-cost-limit',
  '@escape.tech/graphql-armor-max-aliases',
  '@escape.tech/graphql-armor-max-depth',
  '@escape.tech/graphql-armor-max-directives',
  '@escape.tech/graphql-armor-max-tokens',
  'graphql-jit',
  'jose',
  'dataloader',
  'bowser',
  're2js',
];
const vendorFile = (pkg) => `${pkg.replace(/^@/, '').replace(/\//g, '__')}.js`;

/** Bundles VENDORED into dist/vendor/ and points dist/'s imports of them there. Each bundle exports what Node's
 * own import of the package gives (its default and named exports, listed by importing it here), so the code that
 * imports it is unchanged. Returns the milliseconds spent. */
async function vendor(esbuild) {
  const t0 = Date.now();
  const entries = path.join(ROOT, '.tmp', 'vendor-entries');
  fs.rmSync(entries, { recursive: true, force: true });
  fs.mkdirSync(entries, { recursive: true });
  const entryPoints = {};
  for (const pkg of VENDORED) {
    const ns = await import(pkg);
    const names = Object.keys(ns).filter((n) => n !== 'default' && /^[A-Za-z_$][\w$]*$/.test(n));
    const file = path.join(entries, vendorFile(pkg).replace(/\.js$/, '.mjs'));
    const lines = [`import * as ns from ${JSON.stringify(pkg)};`];
    if ('default' in ns) lines.push('export default ns.default;');
    // Through local names: an export may be a reserved word (express's `static`).
    names.forEach((n, i) => lines.push(`const v${i} = ns[${JSON.stringify(n)}];`));
    if (names.length) lines.push(`export { ${names.map((n, i) => `v${i} as ${n}`).join(', ')} };`);
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    entryPoints[vendorFile(pkg).replace(/\.js$/, '')] = file;
  }
  await esbuild.build({
    entryPoints,
    outdir: path.join(DIST, 'vendor'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    chunkNames: 'chunks/[name]-[hash]',
    // The packages' own CommonJS requires (of Node's modules) need a require in an ES module.
    banner: {
      js: "import { createRequire as __vendorRequire } from 'node:module'; const require = __vendorRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  // Static imports in dist/ of a vendored package now name its bundle, by a path relative to the importing file.
  const pattern = new RegExp(
    `(\\bfrom\\s*)"(${VENDORED.map((p) => p.replace(/[/.-]/g, '\\$&')).join('|')})"`,
    'g',
  );
  for (const rel of listFiles(DIST, (f) => f.startsWith(path.join(DIST, 'vendor')))) {
    if (!rel.endsWith('.js')) continue;
    const full = path.join(ROOT, rel);
    const src = fs.readFileSync(full, 'utf8');
    const out = src.replace(pattern, (_m, from, pkg) => {
      let to = path.relative(path.dirname(full), path.join(DIST, 'vendor', vendorFile(pkg)));
      if (!to.startsWith('.')) to = `./${to}`;
      return `${from}${JSON.stringify(to)}`;
    });
    if (out !== src) fs.writeFileSync(full, out);
  }
  return Date.now() - t0;
}

/** Where the Prisma client reads its query compiler's WebAssembly. */
const PRISMA_CLIENT_JS = path.join(DIST, 'generated', 'prisma', 'internal', 'class.js');
/** The generated client imports the module as a base64 string in a JavaScript module. */
const PRISMA_WASM_LINES = [
  'const { wasm } = await import("@prisma/client/runtime/query_compiler_bg.postgresql.wasm-base64.mjs");',
  'return await decodeBase64AsWasm(wasm);',
];
/** The query compiler's file in dist/vendor/. */
export const PRISMA_WASM_FILE = 'query_compiler_bg.postgresql.wasm';

/** Writes the Prisma query compiler's WebAssembly (shipped only as base64 in a JavaScript module) to
 * dist/vendor/ as a file, and points the built client at it: the 2.5 MB string and the module's source stayed
 * resident in every server (~6-8 MiB of RSS), and the file compiles off the main thread (`WebAssembly.compile`)
 * where the client decoded and compiled it on it. Line for line, so the source map still fits. A client generated
 * otherwise (another Prisma version) is left as it is, with a warning. */
function prismaCompilerAsFile(log) {
  const js = fs.readFileSync(PRISMA_CLIENT_JS, 'utf8');
  if (!PRISMA_WASM_LINES.every((l) => js.includes(l))) {
    log('warning: the Prisma client loads its query compiler otherwise; left as generated');
    return;
  }
  const base64 = path.join(
    ROOT,
    'node_modules',
    '@prisma',
    'client',
    'runtime',
    'query_compiler_bg.postgresql.wasm-base64.js',
  );
  const { wasm } = createRequire(import.meta.url)(base64);
  fs.writeFileSync(path.join(DIST, 'vendor', PRISMA_WASM_FILE), Buffer.from(wasm, 'base64'));
  const file = `new URL(${JSON.stringify(`../../../vendor/${PRISMA_WASM_FILE}`)}, import.meta.url)`;
  fs.writeFileSync(
    PRISMA_CLIENT_JS,
    js
      .replace(
        PRISMA_WASM_LINES[0],
        `const wasm = await (await import("node:fs/promises")).readFile(${file});`,
      )
      .replace(PRISMA_WASM_LINES[1], 'return await WebAssembly.compile(wasm);'),
  );
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
