// $expand on the standard synthetic 100,000-concept code system (gen-codesystem.mjs, used unchanged).
import fs from 'node:fs';
import path from 'node:path';
import type { Bench } from '../lib/bench.js';
import { describe, graphqlRequest, request } from '../lib/client.js';
import type { Proc } from '../lib/procs.js';
import { fmt } from '../lib/report.js';

interface Expected {
  concepts: number;
  csUrl: string;
  vsUrl: string;
  filters: Record<string, { substring: number; allWordsPrefix: number }>;
}

const FILTERS = ['heart', 'acute heart', 'C054321', 'xylophone'];
const SECTION = '$expand';

/** Loads the code system + value set through REST, checks totals, and measures the expansions. */
export async function expandScenarios(
  bench: Bench,
  server: Proc,
  token: string,
  dataDir: string,
): Promise<void> {
  const expected = JSON.parse(fs.readFileSync(path.join(dataDir, 'expected.json'), 'utf8')) as Expected;
  const names = [
    ...FILTERS.map((f) => `filter=${f} count=20`),
    'offset=0 count=20',
    'offset=90000 count=20',
    'count=1000',
    'GraphQL expandValueSet filter=heart count=20',
  ];
  const allUnavailable = (why: string) => {
    for (const n of names) bench.unavailable(SECTION, n, why);
  };

  const rssBefore = server.rssMiB();
  const csText = fs.readFileSync(path.join(dataDir, 'CodeSystem-synthetic-bench.json'), 'utf8');
  const cs = await request(server.base, 'POST', 'fhir/R4/CodeSystem', { token, raw: csText });
  if (cs.status !== 201 && cs.status !== 200) return allUnavailable(`POST CodeSystem: ${describe(cs)}`);
  const vsText = fs.readFileSync(path.join(dataDir, 'ValueSet-synthetic-bench-all.json'), 'utf8');
  const vs = await request(server.base, 'POST', 'fhir/R4/ValueSet', { token, raw: vsText });
  if (vs.status !== 201 && vs.status !== 200) return allUnavailable(`POST ValueSet: ${describe(vs)}`);
  const rssAfterLoad = server.rssMiB();

  const base = `${server.base}fhir/R4/ValueSet/$expand?url=${encodeURIComponent(expected.vsUrl)}`;
  const first = await request(server.base, 'GET', base.slice(server.base.length) + '&count=20', { token });
  if (first.status !== 200) return allUnavailable(`GET ValueSet/$expand: ${describe(first)}`);
  const rssAfterExpand = server.rssMiB();
  bench.add({
    section: SECTION,
    name: 'load 100k concepts + first expansion',
    status: 'ok',
    singleMs: [cs.ms, vs.ms, first.ms],
    note:
      `POST CodeSystem ${fmt(cs.ms)} ms, POST ValueSet ${fmt(vs.ms)} ms, first $expand ${fmt(first.ms)} ms; ` +
      `server RSS ${rssBefore} MiB before, ${rssAfterLoad} MiB after load, ${rssAfterExpand} MiB after first expansion`,
  });

  // Totals against the generator's ground truth (allWordsPrefix semantics).
  const mismatches: string[] = [];
  const totals: string[] = [];
  for (const f of FILTERS) {
    const r = await request(
      server.base,
      'GET',
      `${base.slice(server.base.length)}&filter=${encodeURIComponent(f)}&count=20`,
      {
        token,
      },
    );
    const total = r.body?.expansion?.total;
    const want = expected.filters[f]?.allWordsPrefix;
    totals.push(`${f}: ${total} (expected ${want})`);
    if (r.status !== 200 || total !== want)
      mismatches.push(`${f}: got ${r.status === 200 ? total : describe(r)}, expected ${want}`);
  }
  const all = await request(server.base, 'GET', `${base.slice(server.base.length)}&offset=0&count=20`, {
    token,
  });
  if (all.body?.expansion?.total !== expected.concepts)
    mismatches.push(`unfiltered: got ${all.body?.expansion?.total}, expected ${expected.concepts}`);
  bench.add({
    section: SECTION,
    name: 'totals vs expected.json',
    status: mismatches.length ? 'error' : 'ok',
    note: mismatches.length ? `MISMATCH ${mismatches.join('; ')}` : `all match: ${totals.join(', ')}`,
  });

  const headers = { authorization: `Bearer ${token}` };
  const filtered = [];
  for (const f of FILTERS) {
    filtered.push(
      await bench.loadPaired(SECTION, `filter=${f} count=20`, {
        url: `${base}&filter=${encodeURIComponent(f)}&count=20`,
        headers,
      }),
    );
  }
  const off0 = await bench.load(SECTION, 'offset=0 count=20', { url: `${base}&offset=0&count=20`, headers });
  const off9 = await bench.load(SECTION, 'offset=90000 count=20', {
    url: `${base}&offset=90000&count=20`,
    headers,
  });
  await bench.load(SECTION, 'count=1000', { url: `${base}&count=1000`, headers });

  // The GraphQL equivalent of the first filtered call: what the REST translation costs.
  const query = 'query($url: String!) { expandValueSet(url: $url, filter: "heart", count: 20) }';
  const probe = await graphqlRequest(server.base, token, query, { url: expected.vsUrl });
  let gql;
  if (probe.status !== 200 || probe.body?.errors) {
    bench.unavailable(SECTION, 'GraphQL expandValueSet filter=heart count=20', describe(probe));
  } else {
    gql = await bench.load(SECTION, 'GraphQL expandValueSet filter=heart count=20', {
      url: `${server.base}graphql`,
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables: { url: expected.vsUrl } }),
    });
    if (gql.load && filtered[0].load)
      gql.ratioTo = { name: 'REST filter=heart', ratio: gql.load.rps / filtered[0].load.rps };
  }

  // Goals.
  for (const r of filtered) {
    if (!r.load) {
      bench.goal(`${r.name}: p99 < 10 ms, >= 0.5x Express`, r.note ?? r.status, 'N/A');
      continue;
    }
    // Paired with Express runs when the ceiling is running (see Bench.loadPaired), else against the start ceiling.
    const ratio = r.ratioExpress ?? NaN;
    const pass = r.load.p99 < 10 && ratio >= 0.5;
    const against = r.paired
      ? `Express ${fmt(r.paired.ceilingRps)} req/s (p99 ${fmt(r.paired.ceilingP99, 2)} ms) in alternating runs`
      : 'the Express ceiling';
    bench.goal(
      `$expand ${r.name} @${bench.connections}: p99 < 10 ms and >= 0.5x Express ceiling`,
      `p99 ${fmt(r.load.p99, 2)} ms, ${fmt(r.load.rps)} req/s = ${fmt(ratio, 2)}x ${against}`,
      pass ? 'PASS' : 'FAIL',
    );
  }
  if (off0.load && off9.load) {
    const ratio = off9.load.p50 / off0.load.p50;
    bench.goal(
      '$expand offset=90000 latency <= 2x offset=0',
      `p50 ${fmt(off9.load.p50, 2)} vs ${fmt(off0.load.p50, 2)} ms (${fmt(ratio, 2)}x); p99 ${fmt(off9.load.p99, 2)} vs ${fmt(off0.load.p99, 2)} ms`,
      ratio <= 2 ? 'PASS' : 'FAIL',
    );
  } else bench.goal('$expand offset=90000 latency <= 2x offset=0', 'not measured', 'N/A');
  bench.goal(
    '$expand totals match expected.json (allWordsPrefix)',
    mismatches.length ? mismatches.join('; ') : 'all match',
    mismatches.length ? 'FAIL' : 'PASS',
  );
}
