// Bot execution: a warm echo bot per input content type at concurrency 16, and cold first executions after $deploy.
import type { Bench } from '../lib/bench.js';
import { describe, request } from '../lib/client.js';
import type { Proc } from '../lib/procs.js';
import { fmt } from '../lib/report.js';

const SECTION = 'bot';
const ECHO = 'export async function handler(medplum, event) { return event.input; }';
const HL7 =
  'MSH|^~\\&|BENCH|HOSP|RECV|FAC|20240601120000||ADT^A01|MSG00001|P|2.5\r' +
  'PID|1||12345^^^HOSP^MR||Doe^John||19800101|M\r' +
  'PV1|1|I|WARD^101^1';
const INPUTS: { name: string; contentType: string; body: string }[] = [
  { name: 'text/plain', contentType: 'text/plain', body: 'hello bench' },
  {
    name: 'application/json',
    contentType: 'application/json',
    body: JSON.stringify({ hello: 'bench', n: 1 }),
  },
  { name: 'HL7 v2', contentType: 'x-application/hl7-v2+er7', body: HL7 },
];

/** Creates and deploys an echo bot, measures cold and warm executions. */
export async function botScenarios(bench: Bench, server: Proc, token: string): Promise<void> {
  const names = ['cold first $execute after $deploy', ...INPUTS.map((i) => `warm echo ${i.name}`)];
  const allUnavailable = (why: string) => {
    for (const n of names) bench.unavailable(SECTION, n, why);
  };
  const created = await request(server.base, 'POST', 'fhir/R4/Bot', {
    token,
    body: { resourceType: 'Bot', name: 'bench-echo', description: 'echo bot for npm run bench' },
  });
  if (created.status !== 201 && created.status !== 200)
    return allUnavailable(`POST Bot: ${describe(created)}`);
  const id = created.body.id as string;

  // Cold: each $deploy installs new code; the first execution after it compiles/loads that code.
  const cold: number[] = [];
  for (let i = 0; i < 3; i++) {
    const code = `${ECHO}\n// deploy ${i} ${Date.now()}\n`;
    const dep = await request(server.base, 'POST', `fhir/R4/Bot/${id}/$deploy`, {
      token,
      body: { code },
      contentType: 'application/json',
    });
    if (dep.status !== 200 && dep.status !== 201)
      return allUnavailable(`POST Bot/{id}/$deploy: ${describe(dep)}`);
    const first = await request(server.base, 'POST', `fhir/R4/Bot/${id}/$execute`, {
      token,
      raw: 'cold',
      contentType: 'text/plain',
    });
    if (first.status !== 200 || first.text !== 'cold')
      return allUnavailable(
        `POST Bot/{id}/$execute: ${describe(first)} (body ${JSON.stringify(first.text.slice(0, 80))})`,
      );
    cold.push(first.ms);
  }
  bench.add({
    section: SECTION,
    name: 'cold first $execute after $deploy',
    status: 'ok',
    singleMs: cold,
    note: 'one request right after each of 3 deploys (median in p50 column)',
  });

  const url = `${server.base}fhir/R4/Bot/${id}/$execute`;
  for (const input of INPUTS) {
    // The previous load run ends with up to 16 requests still executing (autocannon stops without waiting for
    // them); their slots of the project's 16 count until they finish: give them a moment (else the next run's
    // first requests meet a few 429s), and a 429 here is told to retry, as any client.
    await new Promise((r) => setTimeout(r, 1000));
    const send = () =>
      request(server.base, 'POST', `fhir/R4/Bot/${id}/$execute`, {
        token,
        raw: input.body,
        contentType: input.contentType,
      });
    let check = await send();
    for (let tries = 0; check.status === 429 && tries < 10; tries++) {
      await new Promise((r) => setTimeout(r, 1000 * Number(check.headers.get('retry-after') ?? 1)));
      check = await send();
    }
    if (check.status !== 200) {
      bench.unavailable(SECTION, `warm echo ${input.name}`, describe(check));
      bench.goal(`bot echo ${input.name}: >= 1,000/s, p50 < 5 ms`, describe(check), 'N/A');
      continue;
    }
    const row = await bench.load(SECTION, `warm echo ${input.name}`, {
      url,
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': input.contentType },
      body: input.body,
    });
    if (row.load) {
      const pass = row.load.rps >= 1000 && row.load.p50 < 5;
      bench.goal(
        `bot echo ${input.name} @${bench.connections}: >= 1,000/s, p50 < 5 ms`,
        `${fmt(row.load.rps)} req/s, p50 ${fmt(row.load.p50, 2)} ms`,
        pass ? 'PASS' : 'FAIL',
      );
    } else bench.goal(`bot echo ${input.name}: >= 1,000/s, p50 < 5 ms`, row.note ?? row.status, 'N/A');
  }
}
