// GET/POST /oauth2/authorize (issue 24 item 5): a bad client or redirect URI gets an error page and never a
// redirect (near misses included); every other bad parameter goes back to the client as error + state; the sign-in
// page's headers and escaping; its CSRF token (another browser, another site, a changed request); a wrong password,
// the throttle, another project's client; cancel; and the code it yields, bound to client, redirect URI and PKCE.
import { beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/auth/passwords.js';
import { signIn as apiSignIn, useTestServer, withTestServer } from '../helpers/server.js';
import { addUser, createProject, type Account, type ProjectAdmin } from '../helpers/projects.js';
import {
  createClient,
  exchangeCode,
  FormBrowser,
  pkcePair,
  type AuthorizeAnswer,
  type TestClient,
} from '../helpers/authorize.js';

const s = useTestServer({
  signIn: true,
  config: {
    trustProxy: true,
    loginThrottle: { perSubjectAndAddress: 3, perAddress: 50, perSubject: 20, windowSec: 60 },
  },
});
const REDIRECT = 'http://127.0.0.1:8123/callback';
let admin: ProjectAdmin;
let member: Account;
let app: TestClient;
let other: ProjectAdmin;
let otherApp: TestClient;

beforeAll(async () => {
  admin = await createProject(s.base, s.token, 'Authorize project');
  member = await addUser(s.base, admin.token);
  app = await createClient(s.base, admin.token, [REDIRECT, 'https://app.example.com/cb?x=1']);
  other = await createProject(s.base, s.token, 'Another project');
  otherApp = await createClient(s.base, other.token, [REDIRECT]);
});

/** A valid request's parameters, with changes. */
function params(changes: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    response_type: 'code',
    client_id: app.id,
    redirect_uri: REDIRECT,
    state: 'st<"&>',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    scope: 'openid email',
    ...changes,
  };
}

/** An error page: 400 HTML, no Location, the page's headers. */
function expectErrorPage(a: AuthorizeAnswer, text: RegExp) {
  expect(a.status).toBe(400);
  expect(a.location).toBeNull();
  expect(a.headers.get('content-type')).toMatch(/^text\/html/);
  expect(a.html).toMatch(text);
  expect(a.html).not.toContain('<form');
}

/** A redirect to the client with an error and the state. */
function expectErrorRedirect(a: AuthorizeAnswer, error: string, state: string | null = 'st<"&>') {
  expect([302, 303]).toContain(a.status);
  const url = new URL(a.location ?? '');
  expect(`${url.origin}${url.pathname}`).toBe(REDIRECT);
  expect(url.searchParams.get('error')).toBe(error);
  expect(url.searchParams.get('error_description')).toBeTruthy();
  expect(url.searchParams.get('state')).toBe(state);
  expect(url.searchParams.get('code')).toBeNull();
}

describe('client and redirect URI: an error page, never a redirect', () => {
  it('an unknown client', async () => {
    const a = await new FormBrowser(s.base).open(
      params({ client_id: '7d1b3a52-0000-4000-8000-000000000000' }),
    );
    expectErrorPage(a, /not registered/);
  });
  it('a client_id that is no id', async () => {
    expectErrorPage(await new FormBrowser(s.base).open(params({ client_id: 'abc' })), /not valid/);
  });
  it('no client_id', async () => {
    expectErrorPage(await new FormBrowser(s.base).open(params({ client_id: undefined })), /client_id/);
  });
  it('client_id given twice', async () => {
    const q = new URLSearchParams(params() as Record<string, string>);
    q.append('client_id', app.id);
    expectErrorPage(await new FormBrowser(s.base).open(q.toString()), /not valid/);
  });
  it.each([
    ['an unregistered URI', 'https://evil.example.com/callback'],
    ['a trailing slash', `${REDIRECT}/`],
    ['another port', 'http://127.0.0.1:8124/callback'],
    ['an extra query', `${REDIRECT}?next=https://evil.example.com`],
    ['localhost for 127.0.0.1', 'http://localhost:8123/callback'],
    ['a registered URI without its query', 'https://app.example.com/cb'],
    ['a fragment', `${REDIRECT}#x`],
  ])('redirect_uri with %s', async (_what, uri) => {
    expectErrorPage(await new FormBrowser(s.base).open(params({ redirect_uri: uri })), /redirect/);
  });
  it('no redirect_uri when the client has several', async () => {
    expectErrorPage(await new FormBrowser(s.base).open(params({ redirect_uri: undefined })), /several/);
  });
  it('no redirect_uri when the client has exactly one: that one is used', async () => {
    const one = await createClient(s.base, admin.token, ['https://one.example.com/cb']);
    const a = await new FormBrowser(s.base).open(params({ client_id: one.id, redirect_uri: undefined }));
    expect(a.status).toBe(200);
    expect(a.fields.redirect_uri).toBe('https://one.example.com/cb');
  });
  it('a bad client with a bad response_type still gets the page (the client is checked first)', async () => {
    const a = await new FormBrowser(s.base).open(
      params({ redirect_uri: 'https://evil.example.com/', response_type: 'token' }),
    );
    expectErrorPage(a, /redirect/);
  });
});

describe('other faults: back to the client with error and state (RFC 6749 4.1.2.1)', () => {
  const open = (changes: Record<string, string | undefined>) => new FormBrowser(s.base).open(params(changes));
  it('missing response_type', async () =>
    expectErrorRedirect(await open({ response_type: undefined }), 'invalid_request'));
  it('response_type=token', async () =>
    expectErrorRedirect(await open({ response_type: 'token' }), 'unsupported_response_type'));
  it('response_type=code id_token', async () =>
    expectErrorRedirect(await open({ response_type: 'code id_token' }), 'unsupported_response_type'));
  it('missing PKCE code_challenge', async () =>
    expectErrorRedirect(await open({ code_challenge: undefined }), 'invalid_request'));
  it('a malformed S256 challenge', async () =>
    expectErrorRedirect(await open({ code_challenge: 'short' }), 'invalid_request'));
  it('code_challenge_method given twice', async () => {
    const q = new URLSearchParams(params() as Record<string, string>);
    q.append('code_challenge_method', 'plain');
    expectErrorRedirect(await new FormBrowser(s.base).open(q.toString()), 'invalid_request');
  });
  it('an unknown code_challenge_method', async () => {
    const a = await open({ code_challenge_method: 'S512' });
    expectErrorRedirect(a, 'invalid_request');
    expect(new URL(a.location ?? '').searchParams.get('error_description')).toMatch(
      /^code_challenge_method must/,
    );
  });
  it('a scope with a forbidden character', async () =>
    expectErrorRedirect(await open({ scope: 'openid "email"' }), 'invalid_scope'));
  it('prompt=none (no browser session here)', async () =>
    expectErrorRedirect(await open({ prompt: 'none' }), 'login_required'));
  it('prompt=none with another value', async () =>
    expectErrorRedirect(await open({ prompt: 'none login' }), 'invalid_request'));
  it('a request object', async () =>
    expectErrorRedirect(await open({ request: 'eyJ' }), 'request_not_supported'));
  it('response_mode=fragment', async () =>
    expectErrorRedirect(await open({ response_mode: 'fragment' }), 'invalid_request'));
  it('a nonce over 512 characters', async () =>
    expectErrorRedirect(await open({ nonce: 'n'.repeat(513) }), 'invalid_request'));
  it('without state, the error carries none', async () =>
    expectErrorRedirect(
      await open({ state: undefined, response_type: 'token' }),
      'unsupported_response_type',
      null,
    ));
  it('keeps the registered query of the redirect URI', async () => {
    const a = await open({ redirect_uri: 'https://app.example.com/cb?x=1', response_type: 'token' });
    const url = new URL(a.location ?? '');
    expect(url.searchParams.get('x')).toBe('1');
    expect(url.searchParams.get('error')).toBe('unsupported_response_type');
  });
});

describe('the sign-in page', () => {
  it('is never cached or framed, sends no Referer, loads nothing, posts only here; login_hint prefills', async () => {
    const a = await new FormBrowser(s.base).open(
      params({ login_hint: '"><script>alert(1)</script>', prompt: 'login' }),
    );
    expect(a.status).toBe(200);
    const csp = a.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self' http://127.0.0.1:8123");
    expect(csp).not.toContain('unsafe-inline');
    expect(a.headers.get('x-frame-options')).toBe('DENY');
    expect(a.headers.get('cache-control')).toBe('no-store');
    expect(a.headers.get('referrer-policy')).toBe('no-referrer');
    expect(a.headers.get('set-cookie')).toMatch(
      /^authorize_browser=[\w-]{43}; Path=\/oauth2\/; HttpOnly; SameSite=Lax/,
    );
    expect(a.html).not.toContain('<script>');
    expect(a.html).toContain('&#60;b&#62;'); // the client's name, escaped
    expect(a.fields.email).toBe('"><script>alert(1)</script>');
    expect(a.fields.state).toBe('st<"&>');
    expect(a.fields.csrf).toMatch(/^\d+\.[\w-]{43}$/);
  });
});

/** Opens the page in a browser of its own and posts the password form. */
async function signIn(email: string, password: string, changes: Record<string, string | undefined> = {}) {
  const browser = new FormBrowser(s.base);
  const pkce = pkcePair();
  const page = await browser.open(params({ code_challenge: pkce.challenge, ...changes }));
  expect(page.status).toBe(200);
  const answer = await browser.submit({ ...page.fields, email, password });
  return { browser, page, answer, pkce };
}

const codeOf = (a: AuthorizeAnswer) => new URL(a.location ?? '').searchParams.get('code') ?? '';

describe('password sign-in', () => {
  it('a right password: 303 to the redirect URI with the code and state; the code gets tokens once', async () => {
    const { answer, pkce } = await signIn(member.email, member.password, { nonce: 'n-1' });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const url = new URL(answer.location ?? '');
    expect(`${url.origin}${url.pathname}`).toBe(REDIRECT);
    expect(url.searchParams.get('state')).toBe('st<"&>');
    const code = codeOf(answer);
    const t = await exchangeCode(s.base, {
      code,
      verifier: pkce.verifier,
      clientId: app.id,
      redirectUri: REDIRECT,
    });
    expect(t.status).toBe(200);
    expect(t.body.access_token).toBeTruthy();
    expect(t.body.id_token).toBeTruthy();
    // Reused: invalid_grant, and the session the first exchange made ends.
    const again = await exchangeCode(s.base, {
      code,
      verifier: pkce.verifier,
      clientId: app.id,
      redirectUri: REDIRECT,
    });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    const me = await fetch(`${s.base}auth/me`, {
      headers: { authorization: `Bearer ${t.body.access_token}` },
    });
    expect(me.status).toBe(401);
  });

  it('the audit log records the sign-in, with the client it went through', async () => {
    const { answer } = await signIn(member.email, member.password);
    expect(answer.status).toBe(303);
    const r = await fetch(`${s.base}graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query:
          '{ auditEvents(first: 1, action: "signin") { events { action outcome actorUserId actorClientId } } }',
      }),
    });
    const body = (await r.json()) as { data: { auditEvents: { events: unknown[] } } };
    expect(body.data.auditEvents.events[0]).toEqual({
      action: 'signin',
      outcome: 'success',
      actorUserId: member.userId,
      actorClientId: app.id,
    });
  });

  it('the code redeemed by another client: invalid_grant', async () => {
    const { answer, pkce } = await signIn(member.email, member.password);
    const other2 = await createClient(s.base, admin.token, [REDIRECT]);
    const t = await exchangeCode(s.base, {
      code: codeOf(answer),
      verifier: pkce.verifier,
      clientId: other2.id,
      redirectUri: REDIRECT,
    });
    expect(t.status).toBe(400);
    expect(t.body.error).toBe('invalid_grant');
  });

  it('the code redeemed with another (registered) redirect_uri, or none: invalid_grant', async () => {
    const { answer, pkce } = await signIn(member.email, member.password);
    const code = codeOf(answer);
    for (const redirectUri of ['https://app.example.com/cb?x=1', undefined]) {
      const t = await exchangeCode(s.base, { code, verifier: pkce.verifier, clientId: app.id, redirectUri });
      expect(t.status).toBe(400);
      expect(t.body.error).toBe('invalid_grant');
    }
  });

  it('the code with a wrong PKCE verifier: invalid_grant', async () => {
    const { answer } = await signIn(member.email, member.password);
    const t = await exchangeCode(s.base, {
      code: codeOf(answer),
      verifier: pkcePair().verifier,
      clientId: app.id,
      redirectUri: REDIRECT,
    });
    expect(t.body.error).toBe('invalid_grant');
  });

  it('an expired code: invalid_grant', async () => {
    const { answer, pkce } = await signIn(member.email, member.password);
    const code = codeOf(answer);
    // Its lifetime (AUTH_CODE_LIFETIME) has passed.
    await s.services.db.sql(
      `UPDATE "Login" SET "codeExpiresAt" = now() - interval '1 second' WHERE "codeHash" = $1`,
      [sha256(code)],
    );
    const t = await exchangeCode(s.base, {
      code,
      verifier: pkce.verifier,
      clientId: app.id,
      redirectUri: REDIRECT,
    });
    expect(t.body.error).toBe('invalid_grant');
    expect(t.body.error_description).toMatch(/expired/);
  });

  it('a wrong password: the page again with a generic message, the email kept, no redirect', async () => {
    const { answer } = await signIn(member.email, 'not-the-password');
    expect(answer.status).toBe(400);
    expect(answer.location).toBeNull();
    expect(answer.html).toContain('Email or password is invalid.');
    expect(answer.fields.email).toBe(member.email);
    expect(answer.fields.csrf).toBeTruthy();
  });

  it('an unknown account: the same page and message', async () => {
    const { answer } = await signIn('nobody@example.com', 'not-the-password');
    expect(answer.status).toBe(400);
    expect(answer.html).toContain('Email or password is invalid.');
  });

  it('throttled as /auth/login is: 429 with Retry-After after repeated failures', async () => {
    const browser = new FormBrowser(s.base);
    const page = await browser.open(params());
    let last: AuthorizeAnswer | undefined;
    for (let i = 0; i < 4; i++)
      last = await browser.submit({ ...page.fields, email: admin.email, password: `wrong-${i}` });
    expect(last?.status).toBe(429);
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last?.location).toBeNull();
    // The right password from the same address is refused too while the window lasts.
    const right = await browser.submit({ ...page.fields, email: admin.email, password: admin.password });
    expect(right.status).toBe(429);
  });

  it("another project's client: the account cannot sign in to it (403 page, no redirect)", async () => {
    const browser = new FormBrowser(s.base);
    const page = await browser.open(params({ client_id: otherApp.id }));
    const a = await browser.submit({ ...page.fields, email: member.email, password: member.password });
    expect(a.status).toBe(403);
    expect(a.location).toBeNull();
    expect(a.html).toContain('cannot sign in to this application');
  });

  it('cancel: back to the client with access_denied', async () => {
    const browser = new FormBrowser(s.base);
    const page = await browser.open(params());
    expectErrorRedirect(await browser.submit({ ...page.fields, cancel: '1' }), 'access_denied');
  });
});

describe('client kinds and PKCE methods', () => {
  it('a confidential client redeems the code with its secret (without it: invalid_client, the code kept)', async () => {
    const conf = await createClient(s.base, admin.token, [REDIRECT], 'confidential');
    const { answer, pkce } = await signIn(member.email, member.password, { client_id: conf.id });
    const code = codeOf(answer);
    const bare = await exchangeCode(s.base, {
      code,
      verifier: pkce.verifier,
      clientId: conf.id,
      redirectUri: REDIRECT,
    });
    expect(bare.status).toBe(401);
    expect(bare.body.error).toBe('invalid_client');
    const t = await exchangeCode(s.base, {
      code,
      verifier: pkce.verifier,
      clientId: conf.id,
      clientSecret: conf.secret ?? '',
      redirectUri: REDIRECT,
    });
    expect(t.status, t.text).toBe(200);
    expect(t.body.id_token).toBeTruthy();
  });

  it('without code_challenge_method the challenge is plain (RFC 7636 4.3), accepted while PKCE_ALLOW_PLAIN', async () => {
    const verifier = pkcePair().verifier;
    const { answer } = await signIn(member.email, member.password, {
      code_challenge: verifier,
      code_challenge_method: undefined,
    });
    const t = await exchangeCode(s.base, {
      code: codeOf(answer),
      verifier,
      clientId: app.id,
      redirectUri: REDIRECT,
    });
    expect(t.status, t.text).toBe(200);
  });

  it('PKCE_ALLOW_PLAIN=false: plain, stated or implied, goes back as invalid_request', async () => {
    await withTestServer({ config: { pkceAllowPlain: false } }, async (strict) => {
      const token = (await apiSignIn(strict.base)).access_token;
      const c = await createClient(strict.base, token, [REDIRECT]);
      const verifier = pkcePair().verifier;
      for (const method of ['plain', undefined]) {
        const a = await new FormBrowser(strict.base).open(
          params({ client_id: c.id, code_challenge: verifier, code_challenge_method: method }),
        );
        expectErrorRedirect(a, 'invalid_request');
      }
    });
  });
});

describe('CSRF: the form is good only from the browser it was made for, for its request', () => {
  it('a wrong token', async () => {
    const b = new FormBrowser(s.base);
    const page = await b.open(params());
    const csrf = `${page.fields.csrf.slice(0, -2)}${page.fields.csrf.endsWith('AA') ? 'BB' : 'AA'}`;
    const a = await b.submit({ ...page.fields, csrf, email: member.email, password: member.password });
    expect(a.status).toBe(403);
    expect(a.location).toBeNull();
    expect(a.html).toContain('Start again');
  });
  it('no cookie (a post from another site)', async () => {
    const b = new FormBrowser(s.base);
    const page = await b.open(params());
    const a = await b.submit(
      { ...page.fields, email: member.email, password: member.password },
      { cookie: null },
    );
    expect(a.status).toBe(403);
  });
  it("another browser's form (an attacker's own page, posted from the victim's browser)", async () => {
    const attacker = new FormBrowser(s.base);
    const page = await attacker.open(params());
    const victim = new FormBrowser(s.base);
    await victim.open(params());
    const a = await victim.submit({ ...page.fields, email: member.email, password: member.password });
    expect(a.status).toBe(403);
  });
  it('the request changed after the page was made (another state)', async () => {
    const b = new FormBrowser(s.base);
    const page = await b.open(params());
    const a = await b.submit({
      ...page.fields,
      state: 'other',
      email: member.email,
      password: member.password,
    });
    expect(a.status).toBe(403);
  });
  it('an authorization request sent as a form post (no step) gets the sign-in page, as GET', async () => {
    const b = new FormBrowser(s.base);
    const a = await b.submit(params({ login_hint: member.email }) as Record<string, string>);
    expect(a.status).toBe(200);
    expect(a.fields.step).toBe('password');
    expect(a.fields.email).toBe(member.email);
    expect(b.cookie).toMatch(/^authorize_browser=/);
    const done = await b.submit({ ...a.fields, password: member.password });
    expect(done.status).toBe(303);
  });
  it('an unknown step', async () => {
    const b = new FormBrowser(s.base);
    const page = await b.open(params());
    for (const step of ['admin', 'constructor', '__proto__']) {
      const a = await b.submit({ ...page.fields, step });
      expect(a.status).toBe(400);
    }
    const a = await b.submit({ ...page.fields, step: 'admin' });
    expect(a.status).toBe(400);
    expect(a.location).toBeNull();
  });
  it('a form post that is not a form', async () => {
    const r = await fetch(`${s.base}oauth2/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(params()),
      redirect: 'manual',
    });
    expect(r.status).toBe(400);
    expect(r.headers.get('location')).toBeNull();
  });
});
