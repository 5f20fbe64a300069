// /oauth2/authorize driven as a browser without JavaScript would: GET the sign-in page (keeping its cookie), read
// its form's fields, post them back with what the user types, follow nothing (each answer is asserted). Also the
// client applications and PKCE pairs those tests need, made through the public API.
import crypto from 'node:crypto';
import { call } from './server.js';

/** A client application with registered redirect URIs. */
export interface TestClient {
  id: string;
  secret: string | null;
  redirectUris: string[];
}

/** Creates a client application in the project of `adminToken` (createClientApplication). */
export async function createClient(
  base: string,
  adminToken: string,
  redirectUris: string[],
  type: 'public' | 'confidential' = 'public',
): Promise<TestClient> {
  const r = await call(base, 'POST', 'graphql', {
    token: adminToken,
    headers: { 'content-type': 'application/json' },
    body: {
      query: `mutation ($uris: [String!], $type: ClientType) {
        createClientApplication(name: "Browser app <b>", type: $type, redirectUris: $uris) { client { id } secret }
      }`,
      variables: { uris: redirectUris, type },
    },
  });
  if (r.status !== 200 || r.body?.errors) throw new Error(`createClientApplication failed: ${r.text}`);
  const c = r.body.data.createClientApplication;
  return { id: c.client.id, secret: c.secret, redirectUris };
}

/** A PKCE verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

/** An answer of /oauth2/authorize: status, headers, the page (HTML) and its form's fields. */
export interface AuthorizeAnswer {
  status: number;
  headers: Headers;
  html: string;
  location: string | null;
  fields: Record<string, string>;
}

const unescape = (s: string) =>
  s.replace(/&#(\d+);/g, (_m, n: string) => String.fromCharCode(Number(n))).replace(/&amp;/g, '&');

/** The named inputs of a page's form (the values it would post), buttons left out. */
export function formFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input ([^>]*)>/g)) {
    const name = /name="([^"]*)"/.exec(m[1])?.[1];
    if (!name) continue;
    out[unescape(name)] = unescape(/value="([^"]*)"/.exec(m[1])?.[1] ?? '');
  }
  return out;
}

/** A browser: its cookie for the server, and where its requests come from (X-Forwarded-For, for throttling). */
export class FormBrowser {
  cookie: string | undefined;
  constructor(
    private readonly base: string,
    readonly from = `10.9.${crypto.randomInt(255)}.${crypto.randomInt(255)}`,
  ) {}

  private async answer(res: Response): Promise<AuthorizeAnswer> {
    const set = res.headers.get('set-cookie');
    if (set) this.cookie = set.split(';')[0];
    const html = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      html,
      location: res.headers.get('location'),
      fields: formFields(html),
    };
  }

  /** GET /oauth2/authorize with these query parameters (a raw query string keeps repeated ones). */
  async open(params: Record<string, string | undefined> | string): Promise<AuthorizeAnswer> {
    const q =
      typeof params === 'string'
        ? params
        : new URLSearchParams(
            Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined),
          );
    const res = await fetch(`${this.base}oauth2/authorize?${q.toString()}`, {
      redirect: 'manual',
      headers: { ...(this.cookie ? { cookie: this.cookie } : {}), 'x-forwarded-for': this.from },
    });
    return this.answer(res);
  }

  /** POSTs a form (the page's fields with the user's changes) to /oauth2/authorize. */
  async submit(
    fields: Record<string, string>,
    opts: { cookie?: string | null } = {},
  ): Promise<AuthorizeAnswer> {
    const cookie = opts.cookie === undefined ? this.cookie : (opts.cookie ?? undefined);
    const res = await fetch(`${this.base}oauth2/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': this.from,
        ...(cookie ? { cookie } : {}),
      },
      body: new URLSearchParams(fields).toString(),
    });
    return this.answer(res);
  }
}

/** The token endpoint's answer to a code (a public client names itself; a confidential one sends its secret). */
export function exchangeCode(
  base: string,
  opts: { code: string; verifier: string; clientId: string; redirectUri?: string; clientSecret?: string },
) {
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code: opts.code,
    code_verifier: opts.verifier,
    client_id: opts.clientId,
  });
  if (opts.redirectUri !== undefined) form.set('redirect_uri', opts.redirectUri);
  if (opts.clientSecret) form.set('client_secret', opts.clientSecret);
  return call(base, 'POST', 'oauth2/token', {
    raw: form.toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}
