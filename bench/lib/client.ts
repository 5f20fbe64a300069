// Small HTTP client helpers for seeding and single-request measurements (global fetch: undici, keep-alive).
import crypto from 'node:crypto';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from './procs.js';

/** A response with its parsed JSON body (when it is JSON) and how long it took. */
export interface Reply {
  status: number;
  // Response bodies are inspected field by field by the scenarios; their shapes vary by endpoint.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
  ms: number;
  headers: Headers;
}

/** Sends one request; `body` objects are JSON-encoded with `contentType` (default application/fhir+json). */
export async function request(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; raw?: string; contentType?: string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined = opts.raw;
  if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] = opts.contentType ?? 'application/fhir+json';
  const t0 = performance.now();
  const res = await fetch(`${base}${path.replace(/^\//, '')}`, { method, headers, body });
  const text = await res.text();
  const ms = performance.now() - t0;
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text, ms, headers: res.headers };
}

/** Sends a GraphQL operation to POST /graphql. */
export function graphqlRequest(
  base: string,
  token: string,
  query: string,
  variables: object = {},
): Promise<Reply> {
  return request(base, 'POST', 'graphql', {
    token,
    body: { query, variables },
    contentType: 'application/json',
  });
}

/** Tokens of one sign-in (one Login). */
export interface Session {
  accessToken: string;
  loginId: string;
}

/** Signs in as the bench admin with PKCE (POST /auth/login then /oauth2/token), like MedplumClient. */
export async function signIn(base: string): Promise<Session> {
  const verifier = crypto.randomBytes(32).toString('base64url');
  const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
  const login = await request(base, 'POST', 'auth/login', {
    body: {
      email: ADMIN_EMAIL,
      password: ADMIN_PASSWORD,
      codeChallenge: challenge,
      codeChallengeMethod: 'S256',
    },
    contentType: 'application/json',
  });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text.slice(0, 300)}`);
  const res = await fetch(`${base}oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: login.body.code,
      code_verifier: verifier,
    }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`token failed: ${res.status} ${text.slice(0, 300)}`);
  return {
    accessToken: (JSON.parse(text) as { access_token: string }).access_token,
    loginId: login.body.login,
  };
}

/** A short description of an unexpected reply, for "not available" notes. */
export function describe(r: Reply): string {
  const issue = r.body?.issue?.[0];
  const msg = issue?.diagnostics ?? issue?.details?.text ?? r.body?.errors?.[0]?.message ?? r.text;
  // One line for the table: no HTML tags or line breaks (Express's default 404 page is HTML).
  const line = String(msg)
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return `HTTP ${r.status}: ${line.slice(0, 200)}`;
}
