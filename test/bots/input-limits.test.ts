// Bot input size: BOT_INPUT_LIMIT counts the bytes after Content-Encoding is undone (a 413 naming it, whichever way
// the input came), compressed input reaches the bot as sent, an encoding the server cannot undo is a 415, and JSON
// input is parsed in steps into the same value JSON.parse gives, within JSON_MAX_DEPTH.
import zlib from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';
import { createBot, gql } from './helpers.js';

const LIMIT = 3 * 1024 * 1024;
const server = useTestServer({ signIn: true, config: { botInputLimit: LIMIT } });
let echo: string;
let count: string;

beforeAll(async () => {
  echo = await createBot(
    server,
    server.token,
    'export async function handler(medplum, event) { return { input: event.input }; }',
  );
  count = await createBot(
    server,
    server.token,
    `export async function handler(medplum, event) {
      const v = event.input;
      return typeof v === 'string' ? { length: v.length } : { length: v.length, last: v[v.length - 1] };
    }`,
  );
});

/** POSTs bytes to a bot's $execute with the given headers. */
async function post(id: string, body: Buffer | string, headers: Record<string, string>) {
  const r = await fetch(`${server.base}fhir/R4/Bot/${id}/$execute`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  const text = await r.text();
  return { status: r.status, text, body: JSON.parse(text) as Record<string, unknown> & OutcomeLike };
}

interface OutcomeLike {
  resourceType?: string;
  issue?: Array<{ code: string; details: { text: string } }>;
}

/** A JSON array of `n` small objects (about 20 bytes each). */
const items = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ a: i, b: [1, 2] })));

describe('compressed bot input', () => {
  it('gzip, deflate and br bodies reach the bot as sent', async () => {
    const json = JSON.stringify({ hello: 'world', n: [1, 2, 3] });
    for (const [encoding, bytes] of [
      ['gzip', zlib.gzipSync(json)],
      ['deflate', zlib.deflateSync(json)],
      ['br', zlib.brotliCompressSync(json)],
    ] as const) {
      const r = await post(echo, bytes, { 'content-type': 'application/json', 'content-encoding': encoding });
      expect(r.status, `${encoding}: ${r.text}`).toBe(200);
      expect(r.body.input).toEqual({ hello: 'world', n: [1, 2, 3] });
    }
  });

  it('counts the inflated bytes: 40 kB of gzip that inflate past BOT_INPUT_LIMIT are a 413 naming it', async () => {
    // 8 MB of JSON, a few kB on the wire.
    const item = '{"a":1,"b":[1,2]}';
    const bomb = zlib.gzipSync(`[${`${item},`.repeat((8 * 1024 * 1024) / (item.length + 1))}${item}]`, {
      level: 9,
    });
    expect(bomb.length).toBeLessThan(200 * 1024);
    for (const type of ['application/json', 'text/plain']) {
      const r = await post(count, bomb, { 'content-type': type, 'content-encoding': 'gzip' });
      expect(r.status, r.text).toBe(413);
      expect(r.body.resourceType).toBe('OperationOutcome');
      expect(r.body.issue?.[0].code).toBe('too-costly');
      expect(r.body.issue?.[0].details.text).toBe(
        `Bot input may be at most ${LIMIT} bytes (BOT_INPUT_LIMIT)`,
      );
    }
  });

  it('an uncompressed body over BOT_INPUT_LIMIT is a 413 naming it', async () => {
    const r = await post(count, 'x'.repeat(LIMIT + 1), { 'content-type': 'text/plain' });
    expect(r.status).toBe(413);
    expect(r.body.issue?.[0].details.text).toMatch(/BOT_INPUT_LIMIT/);
    // At the limit exactly: accepted.
    const ok = await post(count, 'x'.repeat(LIMIT), { 'content-type': 'text/plain' });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.length).toBe(LIMIT);
  });

  it('an unknown Content-Encoding is a 415 naming it', async () => {
    const r = await post(echo, '{}', { 'content-type': 'application/json', 'content-encoding': 'x-mystery' });
    expect(r.status).toBe(415);
    expect(r.body.resourceType).toBe('OperationOutcome');
    expect(r.body.issue?.[0].details.text).toMatch(/Content-Encoding "x-mystery"/i);
  });
});

describe('large JSON input', () => {
  it('2 MB of JSON is parsed (in steps) into the value JSON.parse gives', async () => {
    const json = items(100_000); // about 2.3 MB
    expect(json.length).toBeGreaterThan(1024 * 1024);
    const r = await post(count, zlib.gzipSync(json), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    expect(r.body).toEqual({ length: 100_000, last: { a: 99_999, b: [1, 2] } });
    const bad = await post(count, json.slice(0, -1), { 'content-type': 'application/json' });
    expect(bad.status).toBe(400);
    expect(bad.body.issue?.[0].details.text).toMatch(/^Malformed JSON in request body/);
  });

  it('JSON nested deeper than JSON_MAX_DEPTH is a 400 naming it', async () => {
    const r = await post(echo, `${'['.repeat(300)}${']'.repeat(300)}`, {
      'content-type': 'application/json',
    });
    expect(r.status).toBe(400);
    expect(r.body.issue?.[0].details.text).toBe(
      'JSON input nested deeper than the limit of 256 (JSON_MAX_DEPTH)',
    );
    const ok = await post(echo, `${'['.repeat(200)}${']'.repeat(200)}`, {
      'content-type': 'application/json',
    });
    expect(ok.status, ok.text).toBe(200);
  });

  it('the limit holds for the executeBot mutation too', async () => {
    // GRAPHQL_BODY_LIMIT (256 kB) is below BOT_INPUT_LIMIT here, so a bot calling a bot carries the big input.
    const relay = await createBot(
      server,
      server.token,
      `export async function handler(medplum, event) {
        try {
          await medplum.executeBot('${count}', 'x'.repeat(${LIMIT + 1}), 'text/plain');
          return 'ran';
        } catch (err) { return String(err.message); }
      }`,
      { memoryLimit: 256 },
    );
    const r = await gql(
      server,
      server.token,
      `mutation { executeBot(id: "${relay}", contentType: "text/plain", body: "") { status body } }`,
    );
    expect(r.body.data.executeBot.status).toBe(200);
    expect(r.body.data.executeBot.body).toMatch(/BOT_INPUT_LIMIT/);
  });
});
