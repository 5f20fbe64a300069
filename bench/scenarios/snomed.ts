// SNOMED CT at release scale (issues 25 and 26): a generated RF2 Snapshot of the International Edition's size
// (scripts/gen-rf2.mjs --size international: ~395,000 concepts, ~1.6M descriptions, a DAG with a ~120,000-concept
// subtree under 404684003 |Clinical finding|), imported with `npm run import` (the CLI a user runs), then on a
// freshly started server: the implicit is-a value set first and warm, the subtree with new one-word filters, ECL
// with a refinement, MINUS and OR (each expression new, then repeated), $subsumes, and the memory the index adds;
// last, a LOINC-sized release (100,000 codes) imported the same way.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Bench } from '../lib/bench.js';
import { describe, request, signIn } from '../lib/client.js';
import { importTarget, peakMiB, runImport } from '../lib/import.js';
import { loopNote, oneAtATime, type LoopResult } from '../lib/one-at-a-time.js';
import { ROOT, startFhirServer, type Proc, type ServerDb } from '../lib/procs.js';
import { fmt } from '../lib/report.js';

const SECTION = 'SNOMED CT';
const SCT = 'http://snomed.info/sct';
const FINDING = '404684003';
const FINDING_SITE = '363698007';

interface Expected {
  counts: { concepts: number; active: number; descriptions: number; findingSubtree: number };
}

/** LOINC-sized release (issue 25: 100,000 codes, import < 30 s). */
const LOINC_TERMS = 100_000;

/** Generates the International-sized SNOMED CT release into dir/rf2 and a LOINC-sized one into dir/loinc (once per
 * run: ~1 min). */
export function generateRelease(dir: string): void {
  for (const [script, args] of [
    ['gen-rf2.mjs', ['--out', path.join(dir, 'rf2'), '--size', 'international']],
    ['gen-loinc.mjs', ['--out', path.join(dir, 'loinc'), '--terms', String(LOINC_TERMS)]],
  ] as const) {
    const g = spawnSync(process.execPath, [path.join(ROOT, 'scripts', script), ...args], {
      encoding: 'utf8',
    });
    if (g.status !== 0) throw new Error(`${script} failed: ${g.stderr}`);
  }
}

/** RSS (MiB) of a server once two readings 1 s apart differ by less than 2 MiB (at most 30 s). */
async function settledRss(server: Proc): Promise<number> {
  let last = -Infinity;
  for (let i = 0; i < 30; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = server.rssMiB() ?? 0;
    if (Math.abs(now - last) < 2) return now;
    last = now;
  }
  return last;
}

/** Distinct destinations of active finding-site relationships in the release (values for new refinements). */
function findingSites(dir: string, n: number): string[] {
  const rel = path.join(dir, 'Snapshot/Terminology');
  const file = fs.readdirSync(rel).find((f) => f.startsWith('sct2_Relationship_'));
  if (!file) throw new Error('no relationship file in the generated release');
  const sites = new Set<string>();
  // The file is ~100 MB: read in chunks, stop once there are enough.
  const fd = fs.openSync(path.join(rel, file), 'r');
  const buf = Buffer.alloc(1 << 20);
  let rest = '';
  try {
    for (let got; sites.size < n && (got = fs.readSync(fd, buf)) > 0;) {
      const lines = (rest + buf.toString('utf8', 0, got)).split('\r\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        const c = line.split('\t');
        if (c[2] === '1' && c[7] === FINDING_SITE) sites.add(c[5]);
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return [...sites].slice(0, n);
}

/** A row and a goal for one loop of requests sent one at a time. */
function loopRow(bench: Bench, name: string, r: LoopResult, goalMs: number) {
  bench.add({
    section: SECTION,
    name: `${name} @1`,
    status: r.ok === r.n ? 'ok' : 'error',
    note: loopNote(r),
  });
  bench.goal(
    `${SECTION} ${name}: p50 < ${goalMs} ms`,
    `p50 ${fmt(r.p50, 2)}, p95 ${fmt(r.p95, 2)} ms (${r.ok}/${r.n} ok)`,
    r.ok === r.n && r.p50 < goalMs ? 'PASS' : 'FAIL',
  );
}

/** The SNOMED scenario on one database: import the releases generated in dir (generateRelease), restart, measure. */
export async function snomedScenario(bench: Bench, db: ServerDb, dir: string): Promise<void> {
  const releaseDir = path.join(dir, 'rf2');
  const expected = JSON.parse(fs.readFileSync(path.join(releaseDir, 'expected.json'), 'utf8')) as Expected;
  const { sdb, env, ownData } = await importTarget(db);
  let server: Proc | undefined;
  try {
    process.stderr.write(`  ${db.kind} ${SECTION}: npm run import (RF2, International size) ...`);
    const imp = await runImport(db, env, [releaseDir, '--shared']);
    process.stderr.write(` ${fmt(imp.ms)} ms, peak RSS ${imp.peakMiB} MiB\n`);
    bench.add({
      section: SECTION,
      name: `npm run import (RF2: ${fmt(expected.counts.concepts)} concepts, ${fmt(expected.counts.descriptions)} descriptions)`,
      status: 'ok',
      singleMs: [imp.ms],
      note: `${fmt(imp.ms)} ms wall (process start included), peak RSS ${imp.peakMiB} MiB`,
    });
    bench.goal(
      'SNOMED CT import: < 120 s, peak RSS < 1.5 GB',
      `${fmt(imp.ms / 1000, 1)} s, peak RSS ${imp.peakMiB} MiB`,
      imp.ms < 120_000 && imp.peakMiB * 1048576 < 1.5e9 ? 'PASS' : 'FAIL',
    );

    // The baseline for the memory the release adds: the same server on the same data with no index kept (none
    // read back at start: the indexes of big code systems are otherwise read back in the background at start).
    server = await startFhirServer('A', sdb, {
      LOAD_CORE_TERMINOLOGY: 'false',
      TERMINOLOGY_INDEX_BUDGET_MB: '0',
    });
    await signIn(server.base);
    const rssBaseline = await settledRss(server);
    await server.stop();

    server = await startFhirServer('A', sdb, { LOAD_CORE_TERMINOLOGY: 'false' });
    const { accessToken: token } = await signIn(server.base);
    const rssStart = await settledRss(server);
    const fhir = `${server.base}fhir/R4/`;
    const vs = (url: string) => `${fhir}ValueSet/$expand?url=${encodeURIComponent(url)}`;
    const isa = vs(`${SCT}?fhir_vs=isa/${FINDING}`);
    const ecl = (e: string) => vs(`${SCT}?fhir_vs=ecl/${encodeURIComponent(e)}`);
    const origin = server.base;
    const rel = (u: string) => u.slice(origin.length);

    const first = await request(server.base, 'GET', rel(`${isa}&count=20`), { token });
    const total = first.body?.expansion?.total;
    bench.add({
      section: SECTION,
      name: `first $expand isa/${FINDING} count=20 after start`,
      status: first.status === 200 && total === expected.counts.findingSubtree ? 'ok' : 'error',
      singleMs: [first.ms],
      note:
        first.status === 200
          ? `${fmt(first.ms)} ms; total ${total} (release: ${expected.counts.findingSubtree}); RSS ${rssStart} MiB before, ${server.rssMiB()} after`
          : describe(first),
    });
    bench.goal(
      `${SECTION} first isa/${FINDING} after start: < 1 s, exact total`,
      `${fmt(first.ms)} ms, total ${total} vs ${expected.counts.findingSubtree}`,
      first.ms < 1000 && total === expected.counts.findingSubtree ? 'PASS' : 'FAIL',
    );
    if (first.status !== 200) return;

    loopRow(
      bench,
      `isa/${FINDING} count=20 warm`,
      await oneAtATime(Array(200).fill(`${isa}&count=20`), token),
      2,
    );

    // Codes and words of the subtree, for new filters, new expressions and $subsumes pairs.
    const codes: string[] = [];
    const words = new Set<string>();
    for (let offset = 0; codes.length < 2000; offset += 997) {
      const page = await request(server.base, 'GET', rel(`${isa}&offset=${offset}&count=200`), { token });
      const contains = (page.body?.expansion?.contains ?? []) as Array<{ code: string; display?: string }>;
      if (page.status !== 200 || contains.length === 0) break;
      for (const c of contains) {
        codes.push(c.code);
        for (const w of (c.display ?? '').toLowerCase().split(/[^a-z]+/)) if (w.length >= 4) words.add(w);
      }
    }
    // A word's prefix nobody asked before (each once: the result cache must not answer).
    const prefixes = new Set<string>();
    for (const w of words)
      for (let n = 3; n <= w.length && prefixes.size < 400; n++) prefixes.add(w.slice(0, n));
    const filters = [...prefixes].slice(0, 200);
    loopRow(
      bench,
      `isa/${FINDING} + new one-word filter count=20`,
      await oneAtATime(
        filters.map((f) => `${isa}&filter=${encodeURIComponent(f)}&count=20`),
        token,
      ),
      2,
    );

    // Each ECL shape: new expressions one after the other (cold: evaluated, then cached), then the first repeated.
    const newThenRepeated = async (names: [string, string], count: number, make: (i: number) => string) => {
      const fresh = Array.from({ length: count }, (_, i) => `${make(i)}&count=20`);
      loopRow(bench, names[0], await oneAtATime(fresh, token), 50);
      loopRow(bench, names[1], await oneAtATime(Array(200).fill(fresh[0]), token), 5);
    };
    const sites = findingSites(releaseDir, 60);
    await newThenRepeated(
      ['ECL << finding : site = << X, each new (cold)', 'ECL refinement repeated'],
      Math.min(50, sites.length),
      (i) => ecl(`<< ${FINDING} : ${FINDING_SITE} = << ${sites[i]}`),
    );
    const pick = (i: number) => codes[(i * 7919) % codes.length];
    await newThenRepeated(['ECL MINUS of two subtrees, each new (cold)', 'ECL MINUS repeated'], 50, (i) =>
      ecl(`<< ${FINDING} MINUS << ${pick(i)}`),
    );
    await newThenRepeated(['ECL OR of two subtrees, each new (cold)', 'ECL OR repeated'], 50, (i) =>
      ecl(`<< ${pick(i)} OR << ${pick(i + 1000)}`),
    );

    const subsumes = Array.from(
      { length: 200 },
      (_, i) =>
        `${fhir}CodeSystem/$subsumes?system=${encodeURIComponent(SCT)}&codeA=${pick(i)}&codeB=${pick(i * 3 + 1)}`,
    );
    loopRow(bench, '$subsumes (pairs of the subtree)', await oneAtATime(subsumes, token), 1);

    await new Promise((r) => setTimeout(r, 10_000));
    const settled = server.rssMiB() ?? 0;
    const peak = peakMiB(server.pid) ?? 0;
    bench.add({
      section: SECTION,
      name: 'server RSS: the index read back at start; after the requests',
      status: 'ok',
      note:
        `${rssStart} MiB once the restart read the index back: +${rssStart - rssBaseline} MiB over the same ` +
        `server without it (${rssBaseline} MiB); ${settled} MiB 10 s after the requests (+${settled - rssBaseline} ` +
        `MiB: the ECL relations, the result and membership caches, the requests' heap too), peak ${peak} MiB`,
    });
    bench.goal(
      `${SECTION} index memory (read back at start): <= 400 MB settled`,
      `+${rssStart - rssBaseline} MiB (${rssStart} MiB; without the index ${rssBaseline} MiB)`,
      (rssStart - rssBaseline) * 1048576 <= 400e6 ? 'PASS' : 'FAIL',
    );
    bench.goal(
      `${SECTION} RSS after the requests: reported (ECL relations, caches, heap)`,
      `+${settled - rssBaseline} MiB (settled ${settled} MiB)`,
      'N/A',
    );
    await server.stop();

    // LOINC at its release's size, into the same database (the server stopped, as for the first import).
    process.stderr.write(`  ${db.kind} ${SECTION}: npm run import (LOINC, ${fmt(LOINC_TERMS)} codes) ...`);
    const loinc = await runImport(db, env, [path.join(dir, 'loinc'), '--shared']);
    process.stderr.write(` ${fmt(loinc.ms)} ms\n`);
    bench.add({
      section: SECTION,
      name: `npm run import (LOINC: ${fmt(LOINC_TERMS)} codes)`,
      status: 'ok',
      singleMs: [loinc.ms],
      note: `${fmt(loinc.ms)} ms wall (process start included), peak RSS ${loinc.peakMiB} MiB`,
    });
    bench.goal(
      'LOINC-sized import (100,000 codes): < 30 s',
      `${fmt(loinc.ms / 1000, 1)} s`,
      loinc.ms < 30_000 ? 'PASS' : 'FAIL',
    );
  } finally {
    await server?.stop();
    fs.rmSync(ownData, { recursive: true, force: true });
  }
}
