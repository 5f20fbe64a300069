// Two instances on one PostgreSQL schema: a bot redeployed, re-identified or deleted through one instance is seen
// at once by the other (its warm cache is invalidated by NOTIFY bot_changed).
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database.js';
import { call, signIn, type TestServer } from '../helpers/server.js';
import { createBot, execute, gql } from './helpers.js';

const db = useTestDatabase();
let a: TestServer;
let b: TestServer;
let token: string;

beforeAll(async () => {
  a = await db.start({ config: { baseUrl: 'http://bots-multi.test/' } });
  b = await db.start({ config: { baseUrl: 'http://bots-multi.test/' } });
  token = (await signIn(a.base)).access_token;
});

async function eventually(fn: () => Promise<boolean>, ms = 3000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('bot cache across instances', () => {
  it('sees redeploys, identifier changes, deletes and secret changes made on the other instance', async () => {
    const id = await createBot(a, token, "export async function handler() { return 'v1'; }", {
      identifier: [{ system: 's', value: 'one' }],
    });
    expect((await execute(b, token, id, '', 'text/plain')).text).toBe('v1');
    const byIdf = () =>
      call(b.base, 'POST', 'fhir/R4/Bot/$execute?identifier=s|one', {
        token,
        raw: '',
        headers: { 'content-type': 'text/plain' },
      });
    expect((await byIdf()).text).toBe('v1');

    await call(a.base, 'POST', `fhir/R4/Bot/${id}/$deploy`, {
      token,
      body: {
        code: "export async function handler(m, e) { return 'v2 ' + (e.secrets.K ? e.secrets.K.valueString : '-'); }",
      },
    });
    await eventually(async () => (await execute(b, token, id, '', 'text/plain')).text === 'v2 -');

    await gql(a, token, 'mutation { setProjectSecret(name: "K", value: "k1") }');
    await eventually(async () => (await execute(b, token, id, '', 'text/plain')).text === 'v2 k1');

    await call(a.base, 'PUT', `fhir/R4/Bot/${id}`, {
      token,
      body: { resourceType: 'Bot', id, name: 'renamed', identifier: [{ system: 's', value: 'two' }] },
    });
    await eventually(async () => (await byIdf()).status === 404);

    await call(a.base, 'DELETE', `fhir/R4/Bot/${id}`, { token });
    await eventually(async () => (await execute(b, token, id, '', 'text/plain')).status === 404);
  });
});
