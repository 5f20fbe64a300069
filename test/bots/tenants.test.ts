// Who may do what with bots, with an admin and a member of one project (issue 12 items 3 and 7): only admins
// write bot code; a bot always acts as its caller; a warm isolate never lets one execution act as another.
import { beforeAll, describe, expect, it } from 'vitest';
import { addUser, createProject, type Account } from '../helpers/projects.js';
import { call, useTestServer } from '../helpers/server.js';
import { createBot, execute, gql } from './helpers.js';

const server = useTestServer({ signIn: true });
let admin: string;
let member: Account;

beforeAll(async () => {
  admin = server.token;
  member = await addUser(server.base, admin);
  const set = await gql(
    server,
    admin,
    'mutation { setProjectSecret(name: "API_KEY", value: "s3cret-value") }',
  );
  expect(set.body.data.setProjectSecret).toBe(true);
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

const sleeper = (ms: number) =>
  `export async function handler(medplum, event) { await new Promise((r) => setTimeout(r, ${ms})); return 'slept'; }`;

describe('bots share the server fairly', () => {
  let other: Account;
  beforeAll(async () => {
    other = await createProject(server.base, admin, 'Busy project');
  });

  it("a project over its share of concurrent executions gets 429 with Retry-After; another project's bot runs", async () => {
    const id = await createBot(server, other.token, sleeper(1500));
    const mine = await createBot(server, admin, 'export async function handler() { return "mine"; }');
    const burst = Array.from({ length: 20 }, () => execute(server, other.token, id, '{}'));
    await new Promise((r) => setTimeout(r, 300));
    const a = await execute(server, admin, mine, '{}');
    expect(a.status).toBe(200);
    expect(a.text).toBe('mine');
    const results = await Promise.all(burst);
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200).length).toBe(16);
    const refused = results.filter((r) => r.status === 429);
    expect(refused.length).toBe(4);
    for (const r of refused) {
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.body.issue[0].code).toBe('throttled');
      expect(r.body.issue[0].details.text).toMatch(/16 bot executions at once/);
    }
  });

  it('a project over its share of isolate memory gets 429; idle isolates are disposed to make room', async () => {
    const big1 = await createBot(server, other.token, sleeper(1500), { memoryLimit: 1024 });
    const big2 = await createBot(server, other.token, sleeper(10), { memoryLimit: 1024 });
    const mine = await createBot(server, admin, 'export async function handler() { return "mine"; }');
    const first = execute(server, other.token, big1, '{}');
    await new Promise((r) => setTimeout(r, 400));
    const second = await execute(server, other.token, big2, '{}');
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(second.body.issue[0].details.text).toMatch(/1024 MB/);
    expect((await execute(server, admin, mine, '{}')).status).toBe(200);
    expect((await first).status).toBe(200);
    // big1's isolate is idle now: it is disposed to make room for big2.
    const again = await execute(server, other.token, big2, '{}');
    expect(again.status).toBe(200);
  });

  it('one request runs a bounded number of executions, bots calling bots included (breadth, not only depth)', async () => {
    // Each level calls itself 3 times, one after another (never more than 5 deep at once): 121 executions.
    const fan = await createBot(
      server,
      admin,
      `export async function handler(medplum, event) {
         const level = event.input.level ?? 0;
         let n = 1;
         if (level < 4) for (let i = 0; i < 3; i++) n += await medplum.executeBot(event.bot.reference.slice(4), { level: level + 1 });
         return n;
       }`,
    );
    const r = await execute(server, admin, fan, '{}');
    expect(r.status).toBe(400);
    expect(r.body.issue[0].details.text).toMatch(/at most 50 bot executions/);
  });
});

describe('eviction never disposes an isolate in use', () => {
  const busy = useTestServer({
    config: {
      botProjectMaxConcurrent: 64,
      botMaxConcurrent: 64,
      botProjectMemoryMb: 4096,
      botMemoryBudgetMb: 4096,
    },
    signIn: true,
  });
  let token: string;
  beforeAll(async () => {
    token = busy.token;
  });

  it('33 different bots busy at once (more than the 32 warm isolates kept): every one answers 200', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 33; i++) ids.push(await createBot(busy, token, sleeper(2500)));
    const results = await Promise.all(ids.map((id) => execute(busy, token, id, '{}')));
    expect(results.map((r) => `${r.status} ${r.status === 200 ? '' : r.text}`)).toEqual(
      ids.map(() => '200 '),
    );
  });
});
