// @medplum/core's MedplumClient.executeBot against this server, unmodified.
import WebSocket from 'ws';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';
import { createBot } from './helpers.js';

const server = useTestServer({ signIn: true });
let token: string;

beforeAll(async () => {
  // @medplum/core reads a global WebSocket when it loads; Node 20 has none.
  (globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;
  token = server.token;
});

describe('MedplumClient.executeBot', () => {
  it('runs a bot by id and by identifier with JSON, text and FHIR input', async () => {
    const { MedplumClient } = await import('@medplum/core');
    const medplum = new MedplumClient({ baseUrl: server.base, fetch: globalThis.fetch.bind(globalThis) });
    medplum.setAccessToken(token);
    const id = await createBot(
      server,
      token,
      `export async function handler(medplum, event) {
        if (event.contentType === 'text/plain') return 'hello ' + event.input;
        if (event.contentType === 'application/fhir+json') return { resourceType: 'Patient', id: event.input.id };
        return { sum: event.input.a + event.input.b };
      }`,
      { identifier: [{ system: 'https://example.com/bots', value: 'client-bot' }] },
    );
    // MedplumClient sends objects as application/fhir+json unless told otherwise; plain JSON needs the type.
    expect(await medplum.executeBot(id, { a: 2, b: 3 }, 'application/json')).toEqual({ sum: 5 });
    await expect(medplum.executeBot(id, { a: 2, b: 3 })).rejects.toThrow(/resourceType/);
    expect(await medplum.executeBot(id, 'world', 'text/plain')).toBe('hello world');
    const patient = await medplum.executeBot(
      { system: 'https://example.com/bots', value: 'client-bot' },
      { resourceType: 'Patient', id: 'p7' },
      'application/fhir+json',
    );
    expect(patient).toMatchObject({ resourceType: 'Patient', id: 'p7' });
    await expect(
      medplum.executeBot('00000000-0000-0000-0000-000000000000', {}, 'application/json'),
    ).rejects.toThrow(/not found/i);
  });
});
