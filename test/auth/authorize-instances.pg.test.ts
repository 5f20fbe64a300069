// Two server instances on one PostgreSQL schema, as behind a load balancer: the sign-in page shown by one is posted
// to the other, whose answer (the next page, or the code) the first honours. The form's CSRF token is keyed from the
// shared signing key, so no instance needs the state of another.
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database.js';
import { signIn, type TestServer } from '../helpers/server.js';
import { addUser } from '../helpers/projects.js';
import { createClient, exchangeCode, FormBrowser, pkcePair } from '../helpers/authorize.js';

const db = useTestDatabase();
let a: TestServer;
let b: TestServer;
const REDIRECT = 'https://app.example.com/cb';

beforeAll(async () => {
  // One public base URL (the tokens' issuer) for both, as behind one balancer.
  a = await db.start({ config: { baseUrl: 'http://fhir.example.test/' } });
  b = await db.start({ config: { baseUrl: 'http://fhir.example.test/' } });
}, 120_000);

describe('the sign-in page across instances', () => {
  it('a page from A posted to B signs in; the code from B is redeemed at A', async () => {
    const admin = (await signIn(a.base)).access_token;
    const app = await createClient(a.base, admin, [REDIRECT]);
    const user = await addUser(a.base, admin);
    const pkce = pkcePair();
    const onA = new FormBrowser(a.base);
    const page = await onA.open({
      response_type: 'code',
      client_id: app.id,
      redirect_uri: REDIRECT,
      state: 's',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    });
    expect(page.status).toBe(200);
    const onB = new FormBrowser(b.base);
    onB.cookie = onA.cookie;
    const answer = await onB.submit({ ...page.fields, email: user.email, password: user.password });
    expect(answer.status, answer.html).toBe(303);
    const code = new URL(answer.location ?? '').searchParams.get('code') ?? '';
    const t = await exchangeCode(a.base, {
      code,
      verifier: pkce.verifier,
      clientId: app.id,
      redirectUri: REDIRECT,
    });
    expect(t.status, t.text).toBe(200);
    expect(t.body.id_token).toBeTruthy();
  });
});
