// Who may do what with bots, with an admin and a member of one project (issue 12 items 3 and 7): only admins
// write bot code; a bot always acts as its caller; a warm isolate never lets one execution act as another.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, type Account } from './helpers/projects.js';
import { call, dropSchema, signIn, startTestServer, type TestServer } from './helpers/server.js';
import { createBot, execute, gql } from './bots-helpers.js';

let server: TestServer;
let admin: string;
let member: Account;

beforeAll(async () => {
  server = await startTestServer();
  admin = (await signIn(server.base)).access_token;
  member = await addUser(server.base, admin);
  const set = await gql(
    server,
    admin,
    'mutation { setProjectSecret(name: "API_KEY", value: "s3cret-value") }',
  );
  expect(set.body.data.setProjectSecret).toBe(true);
});

afterAll(async () => {
  await server?.close();
  await dropSchema(server?.schema);
});

const leakCode = 'export async function handler(medplum, event) { return event.secrets; }';

describe('only project admins write bot code', () => {
  it('refuses a member creating a bot (it could return event.secrets)', async () => {
    const r = await call(server.base, 'POST', 'fhir/R4/Bot', {
      token: member.token,
      body: { resourceType: 'Bot', name: 'leak', code: leakCode },
    });
    expect(r.status).toBe(403);
    expect(r.body.resourceType).toBe('OperationOutcome');
    expect(r.text).toMatch(/admin/i);
    expect(r.text).not.toContain('s3cret-value');
  });

  it("refuses a member redeploying, updating or deleting an admin's bot; the admin's code still runs", async () => {
    const id = await createBot(
      server,
      admin,
      'export async function handler(medplum, event) { return "admin code"; }',
    );
    const deploy = await call(server.base, 'POST', `fhir/R4/Bot/${id}/$deploy`, {
      token: member.token,
      body: { code: leakCode },
    });
    expect(deploy.status).toBe(403);
    const gqlDeploy = await gql(
      server,
      member.token,
      'mutation ($id: String!) { deployBot(id: $id, code: "x") }',
      {
        id,
      },
    );
    expect(gqlDeploy.body.errors?.[0]?.extensions?.code ?? gqlDeploy.body.errors?.[0]?.message).toBeTruthy();
    expect(JSON.stringify(gqlDeploy.body)).toMatch(/admin/i);
    const put = await call(server.base, 'PUT', `fhir/R4/Bot/${id}`, {
      token: member.token,
      body: { resourceType: 'Bot', id, name: 'mine', code: leakCode },
    });
    expect(put.status).toBe(403);
    const del = await call(server.base, 'DELETE', `fhir/R4/Bot/${id}`, { token: member.token });
    expect(del.status).toBe(403);

    // The admin's next run (and the member's) executes the admin's code, not the member's.
    for (const token of [admin, member.token]) {
      const r = await execute(server, token, id, '{}');
      expect(r.status).toBe(200);
      expect(r.text).toBe('admin code');
    }
  });

  it('lets a member read and execute bots, and the bot acts as the member', async () => {
    const id = await createBot(
      server,
      admin,
      `export async function handler(medplum, event) {
         let created;
         try { await medplum.createResource({ resourceType: 'Bot', name: 'from a bot', code: 'x' }); created = 'yes'; }
         catch (e) { created = e.message; }
         return { requester: event.requester.reference, created };
       }`,
    );
    const read = await call(server.base, 'GET', `fhir/R4/Bot/${id}`, { token: member.token });
    expect(read.status).toBe(200);
    const r = await execute(server, member.token, id, '{}');
    expect(r.status).toBe(200);
    expect(r.body.requester).toBe(`User/${member.userId}`);
    // Run by a member, the bot cannot write bot code either: it never gains rights from who deployed it.
    expect(r.body.created).toMatch(/admin/i);
    const asAdmin = await execute(server, admin, id, '{}');
    expect(asAdmin.body.created).toBe('yes');
  });
});

describe('a warm isolate binds host calls to the execution that made them', () => {
  it("refuses a member's execution calling the admin's medplum client stashed in a global", async () => {
    // The first execution (the admin's) stashes its client and waits; the second (the member's) uses it to run
    // a bot that reports who called it.
    const whoami = await createBot(
      server,
      admin,
      'export async function handler(medplum, event) { return event.requester.reference; }',
    );
    const id = await createBot(
      server,
      admin,
      `export async function handler(medplum, event) {
         if (event.input.stash) {
           globalThis.stolen = medplum;
           await new Promise((r) => setTimeout(r, 1500));
           return 'stashed';
         }
         const c = globalThis.stolen;
         if (!c) return 'no stolen client';
         try {
           return 'acted as ' + (await c.executeBot('${whoami}', {}));
         } catch (e) { return 'refused: ' + e.message; }
       }`,
    );
    const first = execute(server, admin, id, '{"stash":true}');
    await new Promise((r) => setTimeout(r, 400));
    const second = await execute(server, member.token, id, '{}');
    expect((await first).text).toBe('stashed');
    expect(second.status).toBe(200);
    expect(second.text).not.toMatch(/^acted as/);
    // After the admin's execution ended, the stashed client is refused too.
    const later = await execute(server, member.token, id, '{}');
    expect(later.text).not.toMatch(/^acted as/);
  });
});
