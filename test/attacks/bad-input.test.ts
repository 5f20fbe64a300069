// Client input that answered 500: a NUL byte in a search parameter, in a JSON body and in the /auth/login email
// (PostgreSQL text cannot hold NUL), and JSON nested 10,000 deep. Each is the client's mistake: 400 naming it.
import { describe, expect, it } from 'vitest';
import { signIn } from '../helpers/server.js';
import { expectContained, underAttack, useAttackTarget } from './harness.js';

const target = useAttackTarget({}, { signIn: true });

const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

describe('client input that used to answer 500', () => {
  it('a NUL byte in a search parameter: 400', async () => {
    const o = await underAttack(target, (signal) =>
      fetch(`${target.base}fhir/R4/CodeSystem?url=http://x/a%00b`, {
        signal,
        headers: { authorization: `Bearer ${target.token}` },
      }),
    );
    expectContained(o, { status: 400 });
    expect(JSON.parse(o.body).resourceType).toBe('OperationOutcome');
    expect(o.body).toMatch(/NUL/);
  });

  it('a NUL character in a FHIR JSON body: 400, nothing stored', async () => {
    const o = await underAttack(target, (signal) =>
      fetch(`${target.base}fhir/R4/CodeSystem`, {
        method: 'POST',
        signal,
        headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/fhir+json' },
        body: JSON.stringify({
          resourceType: 'CodeSystem',
          url: 'http://example.org/nul',
          name: 'a\u0000b',
          status: 'active',
          content: 'complete',
          concept: [{ code: 'a' }],
        }),
      }),
    );
    expectContained(o, { status: 400 });
    expect(o.body).toMatch(/NUL/);
    const search = await fetch(`${target.base}fhir/R4/CodeSystem?url=http://example.org/nul`, {
      headers: { authorization: `Bearer ${target.token}` },
    });
    expect(((await search.json()) as { total: number }).total).toBe(0);
  });

  it('a NUL character in the /auth/login email: 400', async () => {
    const o = await underAttack(target, (signal) =>
      fetch(`${target.base}auth/login`, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'admin\u0000@example.com', password: 'whatever-123' }),
      }),
    );
    expectContained(o, { status: 400 });
    expect(o.body).toMatch(/NUL/);
  });

  it('a FHIR JSON body nested 10,000 deep: 400 naming JSON_MAX_DEPTH', async () => {
    const body = `{"resourceType":"CodeSystem","url":"http://example.org/deep","status":"active","content":"complete","extension":${deep(10_000)}}`;
    const o = await underAttack(target, (signal) =>
      fetch(`${target.base}fhir/R4/CodeSystem`, {
        method: 'POST',
        signal,
        headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/fhir+json' },
        body,
      }),
    );
    expectContained(o, { status: 400 });
    expect(o.body).toMatch(/JSON_MAX_DEPTH/);
  });

  it('GraphQL variables nested 10,000 deep: 400 naming JSON_MAX_DEPTH', async () => {
    const body = `{"query":"query($v: JSON) { __typename }","variables":{"v":${deep(10_000)}}}`;
    const o = await underAttack(target, (signal) =>
      fetch(`${target.base}graphql`, {
        method: 'POST',
        signal,
        headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
        body,
      }),
    );
    expectContained(o, { status: 400 });
    expect(o.body).toMatch(/JSON_MAX_DEPTH/);
  });
});

describe('anonymous bodies', () => {
  it('a 20 MB /auth/login body from an anonymous client: 413 naming AUTH_BODY_LIMIT, no large-request slot held', async () => {
    // Before: /auth shared the FHIR parser's 50 MB BODY_LIMIT, so anyone could make the server read and parse
    // 20 MB (and hold one of the instance's LARGE_REQUESTS_MAX slots) without signing in.
    const body = JSON.stringify({ email: 'a@example.com', password: 'p'.repeat(20 * 1024 * 1024) });
    const o = await underAttack(target, (signal) =>
      fetch(`${target.base}auth/login`, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/json' },
        body,
      }),
    );
    expectContained(o, { status: 413 });
    expect(JSON.parse(o.body).issue[0].code).toBe('too-costly');
    expect(o.body).toMatch(/AUTH_BODY_LIMIT/);
    // A normal sign-in still works.
    expect((await signIn(target.base)).access_token).toBeTruthy();
  });
});
