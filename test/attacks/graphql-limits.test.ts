// Attacks on /graphql: a huge unauthenticated document (a 12 MB list literal held the event loop 14 s; larger ones
// killed the process), deep and alias-amplified documents (120 aliased expandValueSet took 25 s and 3 GB; 10,000
// aliases of me { sessions } ran 10,000 SQL queries). Each must be refused up front with a 4xx naming the limit.
import { describe, expect, it } from 'vitest';
import { expectContained, underAttack, useAttackTarget } from './harness.js';

const target = useAttackTarget({}, { signIn: true });

function gql(body: string, signal: AbortSignal, auth = true): Promise<Response> {
  return fetch(`${target.base}graphql`, {
    method: 'POST',
    signal,
    headers: {
      'content-type': 'application/json',
      ...(auth ? { authorization: `Bearer ${target.token}` } : {}),
    },
    body,
  });
}

describe('/graphql document limits', () => {
  it('refuses a 12 MB unauthenticated document with 413 before parsing it', async () => {
    const list = '[' + '1,'.repeat(6_000_000) + '1]';
    const doc = JSON.stringify({
      query: `query { readResource(type: "x", id: "y", probe: ${list}) { id } }`,
    });
    expect(doc.length).toBeGreaterThan(12_000_000);
    const o = await underAttack(target, (signal) => gql(doc, signal, false));
    expectContained(o, { status: 413 });
    expect(o.body).toMatch(/GRAPHQL_BODY_LIMIT|limit/i);
  });

  it('refuses a document over the token limit (within the body limit) with 400 naming it', async () => {
    const list = '[' + '1,'.repeat(60_000) + '1]';
    const doc = JSON.stringify({
      query: `query { readResource(type: "x", id: "y", probe: ${list}) { id } }`,
    });
    const o = await underAttack(target, (signal) => gql(doc, signal, false));
    expectContained(o, { status: 400 });
    expect(o.body).toMatch(/token/i);
  });

  it('refuses a document nested 200 deep with 400 naming the depth limit', async () => {
    const doc = JSON.stringify({ query: `{ ${'me { user { '.repeat(100)}id${' } }'.repeat(100)} }` });
    const o = await underAttack(target, (signal) => gql(doc, signal));
    expectContained(o, { status: 400 });
    expect(o.body).toMatch(/depth/i);
  });

  it('refuses 120 aliased expandValueSet(count: 100000) with 400, up front', async () => {
    const fields = Array.from(
      { length: 120 },
      (_, i) => `a${i}: expandValueSet(url: "http://hl7.org/fhir/ValueSet/x", count: 100000)`,
    ).join(' ');
    const o = await underAttack(target, (signal) => gql(JSON.stringify({ query: `{ ${fields} }` }), signal));
    expectContained(o, { status: 400 });
    expect(o.body).toMatch(/alias/i);
  });

  it('refuses 10,000 aliases of me { sessions } with 400 (no SQL query per alias)', async () => {
    const fields = Array.from({ length: 10_000 }, (_, i) => `s${i}: me { sessions { id } }`).join(' ');
    const o = await underAttack(target, (signal) => gql(JSON.stringify({ query: `{ ${fields} }` }), signal));
    expectContained(o, { status: [400, 413] });
  });

  it('refuses more expensive fields than GRAPHQL_MAX_EXPENSIVE_FIELDS, within the alias limit', async () => {
    const fields = Array.from(
      { length: 8 },
      (_, i) => `a${i}: expandValueSet(url: "http://hl7.org/fhir/ValueSet/x", count: 100000)`,
    ).join(' ');
    const o = await underAttack(target, (signal) => gql(JSON.stringify({ query: `{ ${fields} }` }), signal));
    expectContained(o, { status: 400 });
    expect(o.body).toMatch(/GRAPHQL_MAX_EXPENSIVE_FIELDS/);
  });

  it('refuses a document over GRAPHQL_MAX_COST (5000) with 400 naming it, within the other limits', async () => {
    // Each spread of U costs its six scalars again, nested: 200 spreads cost 7880, 100 spreads 3942.5
    // (graphql-armor's cost: objects 2, scalars 1, times 1.5 per level), with few tokens, no alias, depth 3.
    const doc = (spreads: number) =>
      JSON.stringify({
        query: `{ me { user { ${'...U '.repeat(spreads)}} } }
          fragment U on User { id email firstName lastName createdAt serverAdmin }`,
      });
    const over = await underAttack(target, (signal) => gql(doc(200), signal));
    expectContained(over, { status: 400 });
    expect(JSON.parse(over.body).errors[0].message).toMatch(
      /^(Syntax Error: )?Query cost limit \(GRAPHQL_MAX_COST=5000\) exceeded$/,
    );
    const under = await underAttack(target, (signal) => gql(doc(100), signal));
    expectContained(under, { status: 200 });
    expect(JSON.parse(under.body).data.me.user.email).toBeTruthy();
  });

  it('refuses more than GRAPHQL_MAX_DIRECTIVES (20) directives with 400 naming it', async () => {
    const doc = (n: number) =>
      JSON.stringify({ query: `{ me { ${'loginId @include(if: true) '.repeat(n)}} }` });
    const over = await underAttack(target, (signal) => gql(doc(21), signal));
    expectContained(over, { status: 400 });
    // graphql-armor prefixes its parse-time refusals with 'Syntax Error: '.
    expect(JSON.parse(over.body).errors[0].message).toMatch(
      /^(Syntax Error: )?Directive limit \(GRAPHQL_MAX_DIRECTIVES=20\) exceeded$/,
    );
    const at = await underAttack(target, (signal) => gql(doc(20), signal));
    expectContained(at, { status: 200 });
    expect(JSON.parse(at.body).data.me.loginId).toBeTruthy();
  });

  it('still answers an ordinary query', async () => {
    const o = await underAttack(target, (signal) =>
      gql(JSON.stringify({ query: '{ me { user { email } sessions { id } } }' }), signal),
    );
    expectContained(o, { status: 200 });
    expect(JSON.parse(o.body).data.me.user.email).toBeTruthy();
  });
});
