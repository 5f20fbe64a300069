// What checking a resource on write costs (issue 23): the string walk (well-formed Unicode, sizes, element count)
// and the FHIR R4 definition (ajv), as validateResourceBody runs them for every create and update, measured in this
// process on the standard synthetic data (gen-codesystem.mjs) and on a small resource. One row per resource, with
// the cost per 1,000 concepts; the server's POST of the same CodeSystem (the $expand section's load row) holds
// this as a share of its time.
import fs from 'node:fs';
import path from 'node:path';
import { validateResourceBody } from '../../src/fhir/registry.js';
import type { Bench } from '../lib/bench.js';
import { fmt } from '../lib/report.js';

const SECTION = 'writes';

/** Milliseconds of one validation of a fresh copy of `json` (parsing not counted), `reps` times. */
async function timeValidation(json: string, type: string, reps: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const resource: unknown = JSON.parse(json);
    const t0 = performance.now();
    await validateResourceBody(resource, type);
    times.push(performance.now() - t0);
  }
  return times;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Measures validation on write: the 100,000-concept CodeSystem, its ValueSet, and a 20-concept CodeSystem. */
export async function validationScenario(bench: Bench, dataDir: string): Promise<void> {
  const big = fs.readFileSync(path.join(dataDir, 'CodeSystem-synthetic-bench.json'), 'utf8');
  const vs = fs.readFileSync(path.join(dataDir, 'ValueSet-synthetic-bench-all.json'), 'utf8');
  const small = JSON.stringify({
    resourceType: 'CodeSystem',
    url: 'http://example.org/bench/small',
    status: 'active',
    content: 'complete',
    concept: Array.from({ length: 20 }, (_, i) => ({ code: `c${i}`, display: `Concept ${i}` })),
  });
  const concepts = (JSON.parse(big) as { count?: number }).count ?? 100_000;
  const bigMs = await timeValidation(big, 'CodeSystem', 5);
  bench.add({
    section: SECTION,
    name: 'validate on write: 100k-concept CodeSystem',
    status: 'ok',
    singleMs: bigMs,
    note: `median ${fmt(median(bigMs))} ms, ${fmt((median(bigMs) / concepts) * 1000)} ms per 1,000 concepts`,
  });
  const vsMs = await timeValidation(vs, 'ValueSet', 200);
  const smallMs = await timeValidation(small, 'CodeSystem', 2000);
  bench.add({
    section: SECTION,
    name: 'validate on write: small ValueSet / 20-concept CodeSystem',
    status: 'ok',
    singleMs: [median(vsMs), median(smallMs)],
    note: `median ${fmt(median(vsMs) * 1000)} / ${fmt(median(smallMs) * 1000)} microseconds per write`,
  });
}
