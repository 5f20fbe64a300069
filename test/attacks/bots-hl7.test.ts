// Attack: HL7 v2 bodies built to be expensive to parse. Before: 40 MB of "|" blocked the event loop 71 s and
// killed the process (5 MB: 5 s), because the server parsed the whole message on the host to validate it.
import http from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/server.js';
import { expectContained, underAttack, useAttackTarget } from './harness.js';

const target = useAttackTarget({}, { signIn: true });
let botId: string;

beforeAll(async () => {
  const r = await call(target.base, 'POST', 'fhir/R4/Bot', {
    token: target.token,
    body: {
      resourceType: 'Bot',
      name: 'hl7',
      memoryLimit: 1024,
      timeout: 20,
      code: 'export async function handler(medplum, event) { return String(event.input.header.fields.length); }',
    },
  });
  botId = r.body.id as string;
});

const send = (body: string, signal: AbortSignal) =>
  fetch(`${target.base}fhir/R4/Bot/${botId}/$execute`, {
    method: 'POST',
    signal,
    headers: { 'content-type': 'x-application/hl7-v2+er7', authorization: `Bearer ${target.token}` },
    body,
  });

describe('HL7 v2 input', () => {
  it('refuses 40 MB of "|" with 413 naming the limit, without stalling the server', async () => {
    // Streamed with node:http so the answer is seen as soon as it comes, while the body is still being sent.
    const chunk = Buffer.alloc(1024 * 1024, '|');
    const o = await underAttack(
      target,
      (signal) =>
        new Promise((resolve, reject) => {
          const req = http.request(`${target.base}fhir/R4/Bot/${botId}/$execute`, {
            method: 'POST',
            signal,
            headers: {
              'content-type': 'x-application/hl7-v2+er7',
              'content-length': String(40 * chunk.length),
              authorization: `Bearer ${target.token}`,
            },
          });
          req.on('response', (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => {
              resolve({ status: res.statusCode ?? 0, body });
              req.destroy();
            });
          });
          req.on('error', reject);
          let sent = 0;
          const write = () => {
            while (sent < 40 && !req.destroyed) {
              sent++;
              if (!req.write(chunk)) return void req.once('drain', write);
            }
            if (!req.destroyed) req.end();
          };
          write();
        }),
    );
    console.info(
      `[attack] ${expect.getState().currentTestName}: ${o.status} in ${o.ms.toFixed(0)} ms, worst /healthz ${o.worstHealthMs.toFixed(0)} ms`,
    );
    expectContained(o, { status: 413 });
    expect(o.body).toMatch(/4194304 bytes/);
  });

  it('checks 256 KB of "|" after a valid MSH without holding the event loop (the bot parses it)', async () => {
    const body = `MSH|^~\\&|A|B|C|D|20260101||ADT^A01|1|P|2.5${'|'.repeat(256 * 1024)}`;
    const o = await underAttack(target, (signal) => send(body, signal));
    console.info(
      `[attack] ${expect.getState().currentTestName}: ${o.status} in ${o.ms.toFixed(0)} ms, worst /healthz ${o.worstHealthMs.toFixed(0)} ms`,
    );
    expectContained(o, { status: 200 });
    expect(o.body).toBe(String(256 * 1024 + 12));
  });
});
