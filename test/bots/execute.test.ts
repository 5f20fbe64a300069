// Executing bots over REST and GraphQL: content types, lookups, errors, response kinds, event fields, secrets,
// the medplum client, error statuses and execution records. Real HTTP, real sandbox.
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, signIn, useTestServer } from '../helpers/server.js';
import { createBot, createOtherProject, execute, gql } from './helpers.js';

const server = useTestServer({ signIn: true });
let token: string;
let otherToken: string;
let echo: string;

const ECHO = `export async function handler(medplum, event) {
  return { contentType: event.contentType, input: event.input, isHl7: typeof event.input?.getSegment === 'function',
    msgType: typeof event.input?.getSegment === 'function' ? event.input.getSegment('MSH').getField(9).toString() : null };
}`;
const HL7 = 'MSH|^~\\&|SEND|FAC|RECV|FAC|202401011200||ADT^A01|MSG0001|P|2.5\rPID|1||12345^^^MRN||Doe^John\r';

beforeAll(async () => {
  token = server.token;
  otherToken = await createOtherProject(server);
  echo = await createBot(server, token, ECHO, {
    identifier: [{ system: 'https://example.com/bots', value: 'echo' }],
  });
});

describe('input by content type', () => {
  it('text/plain -> string', async () => {
    const r = await execute(server, token, echo, 'hello', 'text/plain; charset=utf-8');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body).toEqual({ contentType: 'text/plain', input: 'hello', isHl7: false, msgType: null });
  });

  it('application/json -> object; non-object -> 400', async () => {
    const r = await execute(server, token, echo, '{"a":[1,2]}', 'application/json; charset=utf-8');
    expect(r.body.input).toEqual({ a: [1, 2] });
    const bad = await execute(server, token, echo, '42', 'application/json');
    expect(bad.status).toBe(400);
    expect(bad.body.resourceType).toBe('OperationOutcome');
    const malformed = await execute(server, token, echo, '{oops', 'application/json');
    expect(malformed.status).toBe(400);
  });

  it('form-urlencoded -> map (last repeated key wins)', async () => {
    const r = await execute(server, token, echo, 'a=1&b=two+words&a=3', 'application/x-www-form-urlencoded');
    expect(r.body.input).toEqual({ a: '3', b: 'two words' });
  });

  it('application/fhir+json -> resource; without resourceType -> 400', async () => {
    const r = await execute(
      server,
      token,
      echo,
      '{"resourceType":"Patient","id":"p1"}',
      'application/fhir+json',
    );
    expect(r.body.input).toEqual({ resourceType: 'Patient', id: 'p1' });
    const bad = await execute(server, token, echo, '{"id":"p1"}', 'application/fhir+json');
    expect(bad.status).toBe(400);
    expect(bad.body.issue[0].details.text).toContain('resourceType');
  });

  it('HL7 v2 -> Hl7Message in the bot; not HL7 -> 400', async () => {
    const r = await execute(server, token, echo, HL7, 'x-application/hl7-v2+er7');
    expect(r.status).toBe(200);
    expect(r.body.isHl7).toBe(true);
    expect(r.body.msgType).toBe('ADT^A01');
    const bad = await execute(server, token, echo, 'hello world', 'x-application/hl7-v2+er7');
    expect(bad.status).toBe(400);
    expect(bad.body.issue[0].details.text).toMatch(/HL7/);
  });

  it('unsupported type -> 415', async () => {
    const r = await execute(server, token, echo, '<a/>', 'application/xml');
    expect(r.status).toBe(415);
    expect(r.body.issue[0].code).toBe('not-supported');
  });
});

describe('lookup and request errors', () => {
  it('finds a bot by identifier in the caller project, and by GET with the query as input', async () => {
    const r = await call(
      server.base,
      'POST',
      `fhir/R4/Bot/$execute?identifier=${encodeURIComponent('https://example.com/bots|echo')}`,
      { token, raw: 'x', headers: { 'content-type': 'text/plain' } },
    );
    expect(r.status).toBe(200);
    expect(r.body.input).toBe('x');
    const g = await call(server.base, 'GET', `fhir/R4/Bot/${echo}/$execute?a=1&b=2`, { token });
    expect(g.status).toBe(200);
    expect(g.body.input).toEqual({ a: '1', b: '2' });
    const gi = await call(
      server.base,
      'GET',
      `fhir/R4/Bot/$execute?identifier=${encodeURIComponent('https://example.com/bots|echo')}&q=z`,
      { token },
    );
    expect(gi.body.input).toEqual({ q: 'z' });
  });

  it('404 for an unknown bot or identifier, or a bot of another project; 400 with neither id nor identifier', async () => {
    expect((await execute(server, token, crypto.randomUUID(), '{}')).status).toBe(404);
    const unknownIdf = await call(server.base, 'POST', 'fhir/R4/Bot/$execute?identifier=x|y', {
      token,
      raw: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(unknownIdf.status).toBe(404);
    const other = await execute(server, otherToken, echo, '{}');
    expect(other.status).toBe(404);
    const otherIdf = await call(
      server.base,
      'POST',
      `fhir/R4/Bot/$execute?identifier=${encodeURIComponent('https://example.com/bots|echo')}`,
      { token: otherToken, raw: '{}', headers: { 'content-type': 'application/json' } },
    );
    expect(otherIdf.status).toBe(404);
    const neither = await call(server.base, 'POST', 'fhir/R4/Bot/$execute', {
      token,
      raw: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(neither.status).toBe(400);
    const anon = await execute(server, '', echo, '{}');
    expect(anon.status).toBe(401);
  });

  it('a bot without code is a 400', async () => {
    const r = await call(server.base, 'POST', 'fhir/R4/Bot', {
      token,
      body: { resourceType: 'Bot', name: 'empty' },
    });
    const x = await execute(server, token, r.body.id, '{}');
    expect(x.status).toBe(400);
    expect(x.body.issue[0].details.text).toContain('$deploy');
  });
});

describe('responses', () => {
  it('follows the return value: string, object, resource, HL7, nothing', async () => {
    const kinds = await createBot(
      server,
      token,
      `export async function handler(medplum, event) {
        const k = event.input.kind;
        if (k === 'string') return 'plain text';
        if (k === 'object') return { a: 1 };
        if (k === 'resource') return { resourceType: 'Patient', id: 'x' };
        if (k === 'hl7') return Hl7Message.parse(${JSON.stringify(HL7)}).buildAck();
        return undefined;
      }`,
    );
    const s = await execute(server, token, kinds, '{"kind":"string"}');
    expect(s.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(s.text).toBe('plain text');
    const o = await execute(server, token, kinds, '{"kind":"object"}');
    expect(o.headers.get('content-type')).toMatch(/^application\/json/);
    expect(o.body).toEqual({ a: 1 });
    const res = await execute(server, token, kinds, '{"kind":"resource"}');
    expect(res.headers.get('content-type')).toMatch(/^application\/fhir\+json/);
    expect(res.body).toEqual({ resourceType: 'Patient', id: 'x' });
    const h = await execute(server, token, kinds, '{"kind":"hl7"}');
    expect(h.headers.get('content-type')).toMatch(/^x-application\/hl7-v2\+er7/);
    expect(h.text).toMatch(/^MSH\|/);
    expect(h.text).toContain('MSA|AA|MSG0001');
    const n = await execute(server, token, kinds, '{"kind":"none"}');
    expect(n.status).toBe(200);
    expect(n.body.resourceType).toBe('OperationOutcome');
  });

  it('lets the bot set status, headers and content type (Set-Cookie dropped)', async () => {
    const id = await createBot(
      server,
      token,
      `export async function handler() {
        return new BotResponse({ status: 201, headers: { 'X-Bot': 'yes', 'Set-Cookie': 'a=b' },
          contentType: 'text/csv', body: 'a,b\\n1,2' });
      }`,
    );
    const r = await execute(server, token, id, '{}');
    expect(r.status).toBe(201);
    expect(r.headers.get('x-bot')).toBe('yes');
    expect(r.headers.get('set-cookie')).toBeNull();
    expect(r.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(r.text).toBe('a,b\n1,2');
  });
});

describe('event and secrets', () => {
  it('hands the bot its event: bot, requester, traceId, headers without credentials, secrets', async () => {
    await gql(server, token, 'mutation { setProjectSecret(name: "API_KEY", value: "s3cr3t") }');
    const id = await createBot(
      server,
      token,
      `export async function handler(medplum, event) {
        return { bot: event.bot, requester: event.requester, traceId: event.traceId, headers: event.headers,
          secret: event.secrets.API_KEY && event.secrets.API_KEY.valueString };
      }`,
      { name: 'Event bot' },
    );
    const r = await execute(server, token, id, '{}', 'application/json', {
      'x-custom': 'v1',
      cookie: 'session=abc',
      'x-request-id': 'trace-123',
    });
    expect(r.status).toBe(200);
    expect(r.body.bot).toEqual({ reference: `Bot/${id}`, display: 'Event bot' });
    expect(r.body.requester.reference).toMatch(/^User\//);
    expect(r.body.traceId).toBe('trace-123');
    expect(r.body.headers['x-custom']).toBe('v1');
    expect(r.body.headers.authorization).toBeUndefined();
    expect(r.body.headers.cookie).toBeUndefined();
    expect(r.body.secret).toBe('s3cr3t');

    // Secret changes reach the next execution (cache invalidated); names are listable, values are not.
    await gql(server, token, 'mutation { setProjectSecret(name: "API_KEY", value: "rotated") }');
    expect((await execute(server, token, id, '{}')).body.secret).toBe('rotated');
    const names = await gql(server, token, '{ projectSecretNames }');
    expect(names.body.data.projectSecretNames).toContain('API_KEY');
    expect(names.text).not.toContain('rotated');
    await gql(server, token, 'mutation { deleteProjectSecret(name: "API_KEY") }');
    expect((await execute(server, token, id, '{}')).body.secret).toBeUndefined();
  });

  it('only admins manage secrets', async () => {
    const email = `user-${crypto.randomBytes(3).toString('hex')}@example.com`;
    await gql(
      server,
      token,
      'mutation($e: String!) { createUser(email: $e, password: "user-password-1", admin: false) { id } }',
      {
        e: email,
      },
    );
    const userToken = (await signIn(server.base, email, 'user-password-1')).access_token;
    const r = await gql(server, userToken, 'mutation { setProjectSecret(name: "X", value: "y") }');
    expect(r.body.errors[0].message).toMatch(/admin/);
    const n = await gql(server, userToken, '{ projectSecretNames }');
    expect(n.body.errors[0].message).toMatch(/admin/);
  });
});

describe('the medplum client inside a bot', () => {
  it('creates and reads resources, searches, and calls other bots (depth-limited)', async () => {
    const type = server.services.fhir.types().includes('ValueSet') ? 'ValueSet' : 'Bot';
    const id = await createBot(
      server,
      token,
      `export async function handler(medplum, event) {
        const created = await medplum.createResource(${
          type === 'ValueSet'
            ? "{ resourceType: 'ValueSet', status: 'active', url: 'https://example.com/vs/' + event.input.n, name: 'VS' + event.input.n }"
            : "{ resourceType: 'Bot', name: 'made by a bot ' + event.input.n }"
        });
        const read = await medplum.readResource(created.resourceType, created.id);
        const found = await medplum.searchResources('Bot', { identifier: 'https://example.com/bots|echo' });
        const echoed = await medplum.executeBot(found[0].id, { hello: 'nested' }, 'application/json');
        return { id: created.id, readId: read.id, type: read.resourceType, echoed };
      }`,
    );
    const r = await execute(server, token, id, '{"n":1}');
    expect(r.status).toBe(200);
    expect(r.body.readId).toBe(r.body.id);
    expect(r.body.type).toBe(type);
    expect(r.body.echoed.input).toEqual({ hello: 'nested' });
    // What the bot created is visible to the caller (same project, same identity).
    const again = await call(server.base, 'GET', `fhir/R4/${type}/${r.body.id}`, { token });
    expect(again.status).toBe(200);

    // A bot that calls itself stops at the depth limit with a clear error.
    const rec = await createBot(
      server,
      token,
      `export async function handler(medplum, event) {
        return medplum.executeBot(event.bot.reference.split('/')[1], {}, 'application/json');
      }`,
    );
    const deep = await execute(server, token, rec, '{}');
    expect(deep.status).toBe(400);
    expect(deep.body.issue[0].details.text).toMatch(/levels deep/);
  });
});

describe('medplum.valueSetExpand', () => {
  it('expands a ValueSet the bot created (through the expandValueSet query)', async () => {
    const id = await createBot(
      server,
      token,
      `export async function handler(medplum) {
        const system = 'https://example.com/cs/bot-colors';
        await medplum.createResource({ resourceType: 'CodeSystem', url: system, status: 'active', content: 'complete',
          concept: [{ code: 'r', display: 'Red' }, { code: 'g', display: 'Green' }, { code: 'b', display: 'Blue' }] });
        await medplum.createResource({ resourceType: 'ValueSet', url: 'https://example.com/vs/bot-colors',
          status: 'active', compose: { include: [{ system }] } });
        const all = await medplum.valueSetExpand({ url: 'https://example.com/vs/bot-colors' });
        const filtered = await medplum.valueSetExpand({ url: 'https://example.com/vs/bot-colors', filter: 'gre' });
        return { all: all.expansion.contains.map((c) => c.code).sort(), filtered: filtered.expansion.contains.map((c) => c.code) };
      }`,
    );
    const r = await execute(server, token, id, '{}');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ all: ['b', 'g', 'r'], filtered: ['g'] });
  });
});

describe('errors and limits', () => {
  it('throw -> 400 processing, timeout -> 504, memory -> 507, each with the reason, never a stack of the server', async () => {
    const thrower = await createBot(
      server,
      token,
      `export async function handler() { throw new Error('bad input!'); }`,
    );
    const t = await execute(server, token, thrower, '{}');
    expect(t.status).toBe(400);
    expect(t.body.issue[0].code).toBe('processing');
    expect(t.body.issue[0].details.text).toContain('bad input!');
    expect(t.text).not.toMatch(/node_modules|src\/bots/);

    const spinner = await createBot(server, token, `export async function handler() { for (;;) {} }`, {
      timeout: 1,
    });
    const s = await execute(server, token, spinner, '{}');
    expect(s.status).toBe(504);
    expect(s.body.issue[0].code).toBe('timeout');

    const hog = await createBot(
      server,
      token,
      `export async function handler() { const a = []; for (;;) a.push(new Array(100000).fill('x' + a.length)); }`,
      { memoryLimit: 16, timeout: 20 },
    );
    const m = await execute(server, token, hog, '{}');
    expect(m.status).toBe(507);
    expect(m.body.issue[0].code).toBe('too-costly');
  }, 60_000);

  it('keeps serving other requests while a bot spins', async () => {
    const spinner = await createBot(server, token, `export async function handler() { for (;;) {} }`, {
      timeout: 4,
    });
    let spun = false;
    const spinning = execute(server, token, spinner, '{}').then((r) => {
      spun = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 200));
    // While the bot spins (4 s), the server answers other requests: five /healthz and another bot's execution
    // come back before the spinning execution does (a blocked event loop would answer them only after it).
    for (let i = 0; i < 5; i++) expect((await fetch(`${server.base}healthz`)).status).toBe(200);
    const e = await execute(server, token, echo, 'still here', 'text/plain');
    expect(e.body.input).toBe('still here');
    expect(spun).toBe(false);
    expect((await spinning).status).toBe(504);
  });
});

describe('GraphQL and execution records', () => {
  it('executeBot mutation returns status, content type, body and headers', async () => {
    const r = await gql(
      server,
      token,
      `mutation($id: String, $body: String) { executeBot(id: $id, contentType: "text/plain", body: $body) {
        status contentType body headers } }`,
      { id: echo, body: 'via graphql' },
    );
    const out = r.body.data.executeBot;
    expect(out.status).toBe(200);
    expect(out.contentType).toMatch(/^application\/json/);
    expect(JSON.parse(out.body).input).toBe('via graphql');
    expect(out.headers).toEqual({});
  });

  it('records executions (within a second) with outcome, status and console output', async () => {
    const logger = await createBot(
      server,
      token,
      `export async function handler(m, event) { console.log('hello from bot', event.input.n); if (event.input.fail) throw new Error('nope'); return 'ok'; }`,
    );
    await execute(server, token, logger, '{"n":7}');
    await execute(server, token, logger, '{"n":8,"fail":true}');
    await new Promise((r) => setTimeout(r, 600));
    const q = await gql(
      server,
      token,
      `query($id: String!) { botExecutions(botId: $id, limit: 10) { botId outcome status message log requester durationMs startedAt } }`,
      { id: logger },
    );
    const rows = q.body.data.botExecutions;
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      outcome: 'error',
      status: 400,
      message: expect.stringContaining('nope'),
    });
    expect(rows[1]).toMatchObject({ outcome: 'success', status: 200, message: null });
    expect(rows[1].log).toContain('hello from bot 7');
    expect(rows[1].requester).toMatch(/^User\//);
    expect(Math.abs(Date.parse(rows[1].startedAt) - Date.now())).toBeLessThan(60_000);
    // Another project sees none of them.
    const other = await gql(server, otherToken, `query($id: String!) { botExecutions(botId: $id) { id } }`, {
      id: logger,
    });
    expect(other.body.data.botExecutions).toEqual([]);
  });
});
