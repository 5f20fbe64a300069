// The index of a SNOMED CT International-sized release, from the generated RF2 files to a loaded index file, the way
// the import and the server do it: one process reads the release and builds and writes the index file (as the
// import does), a fresh one reads that file (a server's first use after a restart) and reports its load time, its
// settled heap and RSS (after gc), ECL and subtree timings, and a digest of answers ($lookup, $expand with
// designations and properties, ECL totals) that must not change when the index's layout does.
//   npx tsx bench/snomed-index.ts [load-only] [--work DIR]
// DIR (default /tmp/snomed-index-bench) holds the release (generated there by scripts/gen-rf2.mjs --size
// international if absent) and the index file; `load-only` reads the file the last run wrote (e.g. to compare
// builds of the same release).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CodeSystemIndexBuilder,
  codeSystemMetaOf,
  evaluateEcl,
  ExpansionEngine,
  implicitValueSet,
  lookupConcept,
  NO_SUPPLEMENTS,
  readIndexFile,
  writeIndexFile,
  type Resolver,
} from '../src/terminology/engine/index.js';
import { folderFiles } from '../src/terminology/import/release/folder.js';
import { rf2Format } from '../src/terminology/import/rf2/format.js';
import { mib, ms, p50, series as expansionSeries } from './lib/in-process.js';

const SCT = 'http://snomed.info/sct';
const FINDING = '404684003';
const SITE = '363698007';
const STAMP = 'bench';
const here = path.dirname(fileURLToPath(import.meta.url));

const argv = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const work = arg('work') ?? '/tmp/snomed-index-bench';
const release = path.join(work, 'rf2');
const file = path.join(work, 'index.bin');

/** Memory after full collections (global.gc needs --expose-gc). */
function settled(): NodeJS.MemoryUsage {
  for (let i = 0; i < 3; i++) global.gc?.();
  return process.memoryUsage();
}

function memLine(label: string, m: NodeJS.MemoryUsage): string {
  return (
    `${label}: heapUsed ${mib(m.heapUsed)}, arrayBuffers ${mib(m.arrayBuffers)}, ` +
    `external ${mib(m.external)}, rss ${mib(m.rss)}`
  );
}

/** Phase 1 (own process): read the release, build the index as the import does, write its file. */
async function build(): Promise<void> {
  const t0 = performance.now();
  const content = await rf2Format.read(folderFiles(release), {});
  const cs = content.codeSystems[0];
  const meta = codeSystemMetaOf(cs.head, 'bench', 1);
  const builder = new CodeSystemIndexBuilder(meta);
  for await (const batch of cs.concepts()) for (const c of batch) builder.add(c);
  const t1 = performance.now();
  const index = builder.finish(meta);
  const t2 = performance.now();
  await writeIndexFile(file, index, STAMP);
  const t3 = performance.now();
  console.log(
    `build: ${index.size} concepts; release read + concepts ${ms(t1 - t0)}, finish ${ms(t2 - t1)}, ` +
      `write ${ms(t3 - t2)}; file ${mib(fs.statSync(file).size)}; peak rss ${mib(process.resourceUsage().maxRSS * 1024)}`,
  );
}

/** Phase 2 (fresh process): load the file, settle, time the operations and digest their answers. */
async function load(): Promise<void> {
  const before = settled();
  const t0 = performance.now();
  const index = await readIndexFile(file, STAMP);
  const loadMs = performance.now() - t0;
  if (!index) throw new Error(`${file}: no index of stamp ${STAMP}`);
  const after = settled();
  console.log(
    `load: ${ms(loadMs)} (file ${mib(fs.statSync(file).size)}); ` +
      `peak rss so far ${mib(process.resourceUsage().maxRSS * 1024)}`,
  );
  console.log(memLine('settled before load', before));
  console.log(memLine('settled after load', after));
  console.log(
    `index: heap+buffers ${mib(after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers)}, ` +
      `memoryEstimateBytes ${mib(index.memoryEstimateBytes())}`,
  );

  const resolver: Resolver = {
    scope: 'bench',
    codeSystem: async (url) => (url === SCT ? index : undefined),
    codeSystemVersions: async () => (index.version ? [index.version] : []),
    valueSet: (url) => implicitValueSet(url, resolver),
    generation: () => 1,
  };
  const engine = new ExpansionEngine();
  const digest = createHash('sha256');
  const expand = async (
    url: string,
    extra: Record<string, unknown> = {},
  ): Promise<{ ms: number; total: number | undefined }> => {
    const t = performance.now();
    const vs = (await resolver.valueSet(url))!;
    const out = await engine.expand(vs, { count: 20, ...extra }, resolver, { maxUnpaged: 1000 });
    const took = performance.now() - t;
    const { identifier: _i, timestamp: _t, ...rest } = out.expansion as unknown as Record<string, unknown>;
    digest.update(JSON.stringify(rest));
    return { ms: took, total: out.expansion.total };
  };
  const series = (label: string, urls: string[], repeat: number): Promise<void> =>
    expansionSeries(label, urls, repeat, expand);
  const ecl = (e: string): string => `${SCT}?fhir_vs=ecl/${encodeURIComponent(e)}`;
  // The first concepts (document order) below a concept: operands and attribute values.
  const below = (code: string, n = 20): string[] => {
    const bits = evaluateEcl(index, `< ${code}`);
    const out: string[] = [];
    for (let o = 0; o < index.size && out.length < n; o++)
      if ((bits[o >>> 5] & (1 << (o & 31))) !== 0) out.push(index.code(o));
    return out;
  };
  const subCodes = below(FINDING);
  // Finding sites some concepts of the subtree have (each expression matches something).
  const bodyCodes = [
    ...new Set(below(FINDING, 500).flatMap((c) => index.propertyValues(index.ordinalOf(c), SITE))),
  ].slice(0, 20);

  await series(`isa/${FINDING} count=20`, [`${SCT}?fhir_vs=isa/${FINDING}`], 100);
  await series(
    'ECL << finding : 363698007 = << value (first builds the relations)',
    bodyCodes.map((v) => ecl(`<< ${FINDING} : 363698007 = << ${v}`)),
    100,
  );
  const m2 = settled();
  console.log(memLine('settled after relations', m2));
  await series(
    'ECL << finding : { 363698007 = *, 116676008 = * }',
    [ecl(`<< ${FINDING} : { 363698007 = *, 116676008 = * }`)],
    100,
  );
  await series(
    'ECL << finding MINUS << sub',
    subCodes.map((v) => ecl(`<< ${FINDING} MINUS << ${v}`)),
    100,
  );
  await series('ECL ^ refset', [ecl('^ 1000002001'), ecl('^ 1000000009')], 100);
  {
    const t = performance.now();
    const r = await expand(`${SCT}?fhir_vs=isa/${FINDING}`, { filter: 'raynaud disease' });
    console.log(`isa/${FINDING} filter 'raynaud disease': ${ms(performance.now() - t)} (total ${r.total})`);
    const d = await expand(`${SCT}?fhir_vs=isa/${FINDING}`, {
      filter: 'severe',
      includeDesignations: true,
      property: ['*'],
    });
    console.log(`same, designations and properties: ${ms(d.ms)} (total ${d.total})`);
    const lang = await expand(`${SCT}?fhir_vs=isa/${FINDING}`, { displayLanguage: 'en-GB', count: 200 });
    console.log(`isa/${FINDING} displayLanguage en-GB count=200: ${ms(lang.ms)}`);
  }
  {
    // $lookup of concepts across the release, every property.
    const times: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const ord = (i * 7919) % index.size;
      const t = performance.now();
      const out = await lookupConcept(
        index,
        ord,
        { properties: ['*'], supplements: NO_SUPPLEMENTS },
        resolver,
      );
      times.push(performance.now() - t);
      digest.update(JSON.stringify(out));
    }
    console.log(`$lookup property=*: p50 ${ms(p50(times))} (${times.length})`);
  }
  console.log(memLine('settled at the end', settled()));
  console.log(`answers digest ${digest.digest('hex').slice(0, 16)}`);
}

/** Runs a phase in a fresh process (gc exposed), printing its output. */
function phase(name: string): void {
  const r = spawnSync(
    process.execPath,
    [
      '--expose-gc',
      '--max-old-space-size=8192',
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      name,
      '--work',
      work,
    ],
    { stdio: 'inherit', cwd: path.join(here, '..') },
  );
  if (r.status !== 0) throw new Error(`phase ${name} failed (${r.status ?? r.signal})`);
}

const what = argv[0] && !argv[0].startsWith('--') ? argv[0] : 'all';
if (what === 'build') await build();
else if (what === 'load') await load();
else {
  if (!fs.existsSync(path.join(release, 'expected.json'))) {
    fs.mkdirSync(work, { recursive: true });
    const g = spawnSync(
      process.execPath,
      [path.join(here, '../scripts/gen-rf2.mjs'), '--size', 'international', '--out', release],
      { stdio: 'inherit' },
    );
    if (g.status !== 0) throw new Error('gen-rf2 failed');
  }
  if (what !== 'load-only') phase('build');
  phase('load');
}
