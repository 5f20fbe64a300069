// The terminology operations validators call besides $expand (issue 26): $validate-code of one code against the
// 100,000-concept value set and $lookup, one at a time (p50) and at the bench's connections (against the Express
// ceiling, paired), and the requests validators send with their content inline: POST $expand and
// $validate-code with a small ValueSet and its CodeSystem as tx-resource.
import fs from 'node:fs';
import path from 'node:path';
import type { Bench } from '../lib/bench.js';
import { describe, request } from '../lib/client.js';
import type { Proc } from '../lib/procs.js';
import { fmt, type Row } from '../lib/report.js';

const SECTION = 'terminology ops';

interface Expected {
  csUrl: string;
  vsUrl: string;
}

/** A small CodeSystem and a ValueSet over it, as a validator sends them with each request. */
function inlineParameters(extra: Array<Record<string, unknown>>): string {
  const system = 'http://example.org/bench/inline-cs';
  const codeSystem = {
    resourceType: 'CodeSystem',
    url: system,
    version: '1.0.0',
    status: 'active',
    content: 'complete',
    concept: Array.from({ length: 20 }, (_, i) => ({ code: `c${i}`, display: `Inline concept number ${i}` })),
  };
  const valueSet = {
    resourceType: 'ValueSet',
    url: 'http://example.org/bench/inline-vs',
    status: 'active',
    compose: { include: [{ system }] },
  };
  return JSON.stringify({
    resourceType: 'Parameters',
    parameter: [
      { name: 'valueSet', resource: valueSet },
      { name: 'tx-resource', resource: codeSystem },
      ...extra,
    ],
  });
}

/** Measures $validate-code, $lookup and inline requests (the 100k code system must be loaded: the $expand
 * section loads it; this loads it when that section did not run). */
export async function terminologyOpsScenarios(
  bench: Bench,
  server: Proc,
  token: string,
  dataDir: string,
): Promise<void> {
  const expected = JSON.parse(fs.readFileSync(path.join(dataDir, 'expected.json'), 'utf8')) as Expected;
  const headers = { authorization: `Bearer ${token}` };
  const probe = `fhir/R4/CodeSystem/$lookup?system=${encodeURIComponent(expected.csUrl)}&code=C054321`;
  if ((await request(server.base, 'GET', probe, { token })).status !== 200) {
    for (const file of ['CodeSystem-synthetic-bench.json', 'ValueSet-synthetic-bench-all.json']) {
      const raw = fs.readFileSync(path.join(dataDir, file), 'utf8');
      const type = file.split('-')[0];
      const r = await request(server.base, 'POST', `fhir/R4/${type}`, { token, raw });
      if (r.status !== 201 && r.status !== 200) {
        bench.unavailable(SECTION, 'all', `POST ${type}: ${describe(r)}`);
        return;
      }
    }
  }

  const validate =
    `${server.base}fhir/R4/ValueSet/$validate-code?url=${encodeURIComponent(expected.vsUrl)}` +
    `&system=${encodeURIComponent(expected.csUrl)}&code=C054321`;
  const lookup = `${server.base}${probe}`;
  const checks: Array<{ name: string; url: string }> = [
    { name: '$validate-code 1 code, 100k value set', url: validate },
    { name: '$lookup 1 code, 100k code system', url: lookup },
  ];
  for (const c of checks) {
    const first = await request(server.base, 'GET', c.url.slice(server.base.length), { token });
    const result = (
      first.body?.parameter as Array<{ name: string; valueBoolean?: boolean }> | undefined
    )?.find((p) => p.name === 'result');
    if (first.status !== 200 || (c.url === validate && result?.valueBoolean !== true)) {
      bench.unavailable(SECTION, c.name, describe(first));
      continue;
    }
    const one = await bench.load(SECTION, `${c.name} one at a time`, { url: c.url, headers, connections: 1 });
    const many = await bench.loadPaired(SECTION, c.name, { url: c.url, headers });
    verdict(
      bench,
      `${c.name}: p50 < 1 ms one at a time, >= 0.8x Express @${bench.connections}`,
      one,
      many,
      1,
      0.8,
    );
  }

  const post = { ...headers, 'content-type': 'application/fhir+json' };
  const inline: Array<{ name: string; path: string; body: string }> = [
    {
      name: 'inline POST $expand (ValueSet + 20-concept CodeSystem as tx-resource)',
      path: 'fhir/R4/ValueSet/$expand',
      body: inlineParameters([{ name: 'count', valueInteger: 10 }]),
    },
    {
      name: 'inline POST $validate-code (ValueSet + 20-concept CodeSystem as tx-resource)',
      path: 'fhir/R4/ValueSet/$validate-code',
      body: inlineParameters([
        { name: 'system', valueUri: 'http://example.org/bench/inline-cs' },
        { name: 'code', valueCode: 'c7' },
      ]),
    },
  ];
  for (const c of inline) {
    const first = await request(server.base, 'POST', c.path, { token, raw: c.body });
    if (first.status !== 200) {
      bench.unavailable(SECTION, c.name, describe(first));
      continue;
    }
    const many = await bench.loadPaired(SECTION, c.name, {
      url: `${server.base}${c.path}`,
      method: 'POST',
      headers: post,
      body: c.body,
    });
    verdict(bench, `${c.name}: >= 0.7x Express @${bench.connections}`, undefined, many, undefined, 0.7);
  }
}

function verdict(
  bench: Bench,
  goal: string,
  one: Row | undefined,
  many: Row,
  p50Max: number | undefined,
  ratioMin: number,
): void {
  if (!many.load || (one && !one.load)) {
    bench.goal(goal, many.note ?? one?.note ?? many.status, 'N/A');
    return;
  }
  const ratio = many.ratioExpress ?? NaN;
  const p50 = one?.load?.p50;
  const pass = ratio >= ratioMin && (p50Max === undefined || (p50 !== undefined && p50 < p50Max));
  bench.goal(
    goal,
    `${p50 !== undefined ? `p50 ${fmt(p50, 2)} ms one at a time; ` : ''}${fmt(many.load.rps)} req/s = ` +
      `${fmt(ratio, 2)}x Express${many.paired ? ` (${fmt(many.paired.ceilingRps)} req/s, alternating runs)` : ''}`,
    pass ? 'PASS' : 'FAIL',
  );
}
