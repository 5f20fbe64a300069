// Hostile bots over HTTP: runaway loops, memory bombs, escapes through host-provided values, huge output,
// cross-project secrets and globals, and fetch to loopback. Each must end in a clean, distinct response and leave
// the server serving.
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';
import { createBot, createOtherProject, execute, gql } from './helpers.js';

const server = useTestServer({ signIn: true });
let token: string;
let otherToken: string;

beforeAll(async () => {
  token = server.token;
  otherToken = await createOtherProject(server);
});

async function healthy(): Promise<void> {
  const r = await fetch(`${server.base}healthz`);
  expect(r.status).toBe(200);
}

describe('runaway bots', () => {
  it('stops a synchronous infinite loop (504)', async () => {
    const id = await createBot(server, token, 'export async function handler() { while (true) {} }', {
      timeout: 1,
    });
    const r = await execute(server, token, id, '{}');
    expect(r.status).toBe(504);
    expect(r.body.issue[0].code).toBe('timeout');
    await healthy();
  });

  it('stops an asynchronous infinite loop (microtasks) and a never-settling promise (504)', async () => {
    const micro = await createBot(
      server,
      token,
      'export async function handler() { for (;;) { await Promise.resolve(); } }',
      { timeout: 1 },
    );
    expect((await execute(server, token, micro, '{}')).status).toBe(504);
    const never = await createBot(
      server,
      token,
      'export async function handler() { await new Promise(() => {}); }',
      {
        timeout: 1,
      },
    );
    expect((await execute(server, token, never, '{}')).status).toBe(504);
    await healthy();
  });

  it('stops a memory bomb (507) and the bot still runs afterwards', async () => {
    const id = await createBot(
      server,
      token,
      `export async function handler(m, e) {
        if (e.input.ok) return 'fine';
        const keep = []; for (;;) keep.push({ a: new Array(100000).fill(keep.length) });
      }`,
      { memoryLimit: 16, timeout: 20 },
    );
    const r = await execute(server, token, id, '{}');
    expect(r.status).toBe(507);
    const again = await execute(server, token, id, '{"ok":true}');
    expect(again.status).toBe(200);
    expect(again.text).toBe('fine');
  }, 30_000);

  it('refuses huge output (502)', async () => {
    const id = await createBot(
      server,
      token,
      "export async function handler() { return 'x'.repeat(20 * 1024 * 1024); }",
      {
        memoryLimit: 256,
      },
    );
    const r = await execute(server, token, id, '{}');
    expect(r.status).toBe(502);
    expect(r.body.issue[0].details.text).toMatch(/too large/);
  }, 30_000);
});

describe('escapes', () => {
  it('finds no host realm through the constructors of event.input or the medplum functions', async () => {
    const id = await createBot(
      server,
      token,
      `export async function handler(medplum, event) {
        const probe = (f) => { try { const g = f(); return typeof g.process + '/' + typeof g.require; } catch (e) { return 'blocked'; } };
        return {
          viaInput: probe(() => event.input.constructor.constructor('return globalThis')()),
          viaArray: probe(() => event.input.list.constructor.constructor('return this')()),
          viaMedplum: probe(() => medplum.readResource.constructor.constructor('return globalThis')()),
          viaEvent: probe(() => event.constructor.constructor('return globalThis')()),
          process: typeof process,
          require: typeof require === 'function' ? (() => { try { require('fs'); return 'loaded'; } catch (e) { return 'refused'; } })() : 'none',
        };
      }`,
    );
    const r = await execute(server, token, id, '{"list":[1]}');
    expect(r.status).toBe(200);
    for (const k of ['viaInput', 'viaArray', 'viaMedplum', 'viaEvent']) {
      expect(['undefined/undefined', 'blocked']).toContain(r.body[k]);
    }
    expect(r.body.process).toBe('undefined');
    expect(r.body.require).not.toBe('loaded');
  });

  it('refuses fetch to loopback', async () => {
    const id = await createBot(
      server,
      token,
      `export async function handler(m, event) { const r = await fetch(event.input.url); return r.status; }`,
    );
    const r = await execute(server, token, id, JSON.stringify({ url: `${server.base}healthz` }));
    expect(r.status).toBe(400);
    expect(r.body.issue[0].details.text).toMatch(/refused|not allowed|private|loopback/i);
  });
});

describe('project isolation', () => {
  it("does not show one project's secrets to another project's bots", async () => {
    await gql(server, token, 'mutation { setProjectSecret(name: "ONLY_A", value: "a-secret") }');
    const code =
      'export async function handler(m, e) { return { names: Object.keys(e.secrets), all: JSON.stringify(e.secrets) }; }';
    const mine = await createBot(server, token, code);
    const theirs = await createBot(server, otherToken, code);
    expect((await execute(server, token, mine, '{}')).body.names).toContain('ONLY_A');
    const r = await execute(server, otherToken, theirs, '{}');
    expect(r.body.names).toEqual([]);
    expect(r.text).not.toContain('a-secret');
    // Nor through the other project's GraphQL.
    const names = await gql(server, otherToken, '{ projectSecretNames }');
    expect(names.body.data.projectSecretNames).toEqual([]);
  });

  it("does not show globals set by one project's bot to another's", async () => {
    const setter = await createBot(
      server,
      token,
      `export async function handler() { globalThis.leak = 'from A'; Object.prototype.polluted = 'yes'; Array.prototype.evil = 1; return 'set'; }`,
    );
    const reader = await createBot(
      server,
      otherToken,
      `export async function handler() { return { leak: typeof globalThis.leak, polluted: ({}).polluted ?? null, evil: [].evil ?? null }; }`,
    );
    expect((await execute(server, token, setter, '{}')).text).toBe('set');
    const r = await execute(server, otherToken, reader, '{}');
    expect(r.body).toEqual({ leak: 'undefined', polluted: null, evil: null });
  });
});
