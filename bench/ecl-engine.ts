// ECL and SNOMED CT implicit value sets at release scale, in process (engine only, no server): a generated
// 370,000-concept DAG with a 120,000-concept subtree, ~1M attribute relationships in groups and 20 refsets.
// Prints build times, memory, and first/p50 timings of $expand (count=20) over implicit urls and ECL.
//   npx tsx bench/ecl-engine.ts
import {
  CodeSystemIndexBuilder,
  ExpansionEngine,
  evaluateEcl,
  subsumption,
  implicitValueSet,
  type CodeSystemIndex,
  type Resolver,
} from '../src/terminology/engine/index.js';
import { relationsOf } from '../src/terminology/engine/ecl/index.js';
import { generateSnomed, SCT } from '../test/terminology/engine/ecl/fixture.js';
import { mib, ms, p50, series as expansionSeries } from './lib/in-process.js';

const N = 370_000;
const SUBTREE = 120_000;
const mem = (): number => {
  global.gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

const m0 = mem();
let t = performance.now();
const data = generateSnomed(N, 7, {
  attributeCount: 50,
  refsetCount: 20,
  subtreeShare: SUBTREE / N,
  maxRelationships: 5,
});
const rels = data.concepts.reduce(
  (n, c) => n + (c.properties ?? []).filter((p) => p.code !== 'refset').length,
  0,
);
console.log(`generated ${N} concepts, ${rels} attribute relationships in ${ms(performance.now() - t)}`);
t = performance.now();
const index: CodeSystemIndex = CodeSystemIndexBuilder.build(
  { url: SCT, version: 'v1', id: 'bench', versionId: '1' },
  data.concepts,
);
data.concepts.length = 0;
const m1 = mem();
console.log(
  `index built in ${ms(performance.now() - t)}; index (with its property objects) ~${mib(m1 - m0)}`,
);
t = performance.now();
const relations = relationsOf(index);
console.log(
  `relations built in ${ms(performance.now() - t)}: ${relations.relType.length} relationships, ` +
    `${mib(relations.memoryBytes())} typed arrays; process heap+buffers now ${mib(mem())}`,
);

const resolver: Resolver = {
  scope: 'bench',
  codeSystem: async (url) => (url === SCT ? index : undefined),
  codeSystemVersions: async () => ['v1'],
  valueSet: (url) => implicitValueSet(url, resolver),
  generation: () => 1,
};
const engine = new ExpansionEngine();
const root = data.codes[1];
const subtreeSize = (() => {
  const b = evaluateEcl(index, `<< ${root}`);
  let n = 0;
  for (let o = 0; o < index.size; o++) if ((b[o >>> 5] & (1 << (o & 31))) !== 0) n++;
  return n;
})();
console.log(`subtree << ${root}: ${subtreeSize} concepts`);

async function expandUrl(url: string, filter?: string): Promise<{ ms: number; total: number | undefined }> {
  const t0 = performance.now();
  const vs = (await resolver.valueSet(url))!;
  const out = await engine.expand(vs, { count: 20, ...(filter ? { filter } : {}) }, resolver, {
    maxUnpaged: 1000,
  });
  return { ms: performance.now() - t0, total: out.expansion.total };
}

/** A series of expansions (bench/lib/in-process.ts) on this index. */
const series = (label: string, urls: string[], repeat: number): Promise<void> =>
  expansionSeries(label, urls, repeat, expandUrl);

const ecl = (e: string): string => `${SCT}?fhir_vs=ecl/${encodeURIComponent(e)}`;
const sub = data.codes.slice(2, 40);
const attr = data.attributes;
await series(`isa/${root} count=20`, [`${SCT}?fhir_vs=isa/${root}`], 200);
await series(
  'ECL << subtree : attr = << value',
  sub.map((v, i) => ecl(`<< ${root} : ${attr[i % attr.length]} = << ${v}`)),
  200,
);
await series(
  'ECL << subtree : << attr = *',
  attr.slice(1, 20).map((a) => ecl(`<< ${root} : << ${a} = *`)),
  200,
);
await series(
  'ECL << subtree : { attr = *, attr2 = * }',
  attr.slice(1, 20).map((a, i) => ecl(`<< ${root} : { ${a} = *, ${attr[i + 20]} = * }`)),
  200,
);
await series(
  'ECL << a MINUS << b',
  sub.map((v) => ecl(`<< ${root} MINUS << ${v}`)),
  200,
);
await series(
  'ECL << a OR << b (other half)',
  sub.map((v, i) => ecl(`<< ${v} OR << ${data.codes[SUBTREE + 100 + i]}`)),
  200,
);
await series(
  '?fhir_vs=refset/<id>',
  data.refsets.map((r) => `${SCT}?fhir_vs=refset/${r}`),
  200,
);
{
  const times: number[] = [];
  for (let i = 0; i < 40; i++) {
    const t0 = performance.now();
    evaluateEcl(index, `<< ${root} : ${attr[(i + 7) % attr.length]} = << ${data.codes[100 + i]}`);
    times.push(performance.now() - t0);
  }
  console.log(`evaluateEcl alone, new '<< subtree : attr = << value' each time: p50 ${ms(p50(times))}`);
  const t0 = performance.now();
  for (let i = 0; i < 100_000; i++) index.ordinalOf(String(1_000_000 + ((i * 7919) % N)));
  console.log(`ordinalOf: ${ms((performance.now() - t0) / 100)} per 1000 lookups`);
}
{
  // $subsumes (issue 26): a concept of the subtree against the subtree's root (subsumed-by, the walk up the DAG)
  // and against a concept of another branch (not-subsumed: every ancestor visited).
  const times: number[] = [];
  const rootOrd = index.ordinalOf(root);
  for (let i = 0; i < 2000; i++) {
    const a = index.ordinalOf(data.codes[(i * 7919) % SUBTREE]);
    const b = i % 2 === 0 ? rootOrd : index.ordinalOf(data.codes[SUBTREE + ((i * 104_729) % (N - SUBTREE))]);
    if (a < 0 || b < 0) continue;
    const t0 = performance.now();
    subsumption(index, a, b);
    times.push(performance.now() - t0);
  }
  console.log(
    `$subsumes (engine), ${times.length} pairs: p50 ${ms(p50(times))}, max ${ms(Math.max(...times))}`,
  );
}
const f = await expandUrl(`${SCT}?fhir_vs=isa/${root}`, 'concept 12');
console.log(`isa/${root} with filter 'concept 12': ${ms(f.ms)} (total ${f.total})`);
console.log(`process heap+buffers at the end ${mib(mem())}`);
