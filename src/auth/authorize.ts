// The authorization request of GET/POST /oauth2/authorize (RFC 6749 4.1.1, PKCE RFC 7636, OIDC Core 3.1.2.1),
// checked in the order RFC 6749 4.1.2.1 sets: first the client and its redirect URI, whose faults are shown to the
// user and never redirected (no open redirect, RFC 9700 4.11), then every other parameter, whose faults go back to
// the (now trusted) redirect URI as `error=...&state=...`. No HTTP here: the routes render what this decides.
import type { Database } from '../db/database.js';
import { checkChallenge } from './pkce.js';
import { isRegistered, MAX_REDIRECT_URI_LENGTH } from './redirect-uris.js';
import { normalizeScope } from './scope.js';
import { MAX_NONCE_LENGTH } from './sign-in.js';
import { isUuid } from './uuid.js';

/** An authorization request whose every parameter was checked: what a sign-in for it is bound to. */
export interface AuthorizeRequest {
  clientId: string;
  projectId: string;
  clientName: string;
  redirectUri: string;
  state?: string;
  codeChallenge: string;
  codeChallengeMethod: 'S256' | 'plain';
  scope: string;
  nonce?: string;
  loginHint?: string;
  /** prompt=login: the page is always shown anyway (there is no browser session to skip it). */
  prompt?: string;
}

/** The error codes an authorization request may be answered with at the redirect URI (RFC 6749 4.1.2.1, OIDC
 * Core 3.1.2.6). */
export type AuthorizeErrorCode =
  | 'invalid_request'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'login_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'server_error';

/** What an authorization request leads to. */
export type AuthorizeDecision =
  /** The client or redirect URI is wrong: an error page, never a redirect. */
  | { kind: 'page'; message: string }
  /** A fault after the redirect URI is trusted: back to the client with error and state. */
  | { kind: 'redirect'; redirectUri: string; error: AuthorizeErrorCode; description: string; state?: string }
  /** A valid request: the sign-in page. */
  | { kind: 'ok'; request: AuthorizeRequest };

/** The parameters as received: a string, absent, or something else (a repeated query parameter is an array). */
export type RawParams = Record<string, unknown>;

/** Longest state, scope and login_hint accepted. */
const MAX_STATE = 2000;
const MAX_SCOPE = 1000;
const MAX_LOGIN_HINT = 320;

/** RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), separated by single spaces. */
const SCOPE_RE = /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/;
/** Characters no parameter may hold (the URL layer refuses %00 already; the form may still carry them). */
// eslint-disable-next-line no-control-regex -- this is the check for them
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;

/** A parameter given once as a string, absent (undefined), or null when it was repeated or malformed. */
function one(params: RawParams, name: string): string | undefined | null {
  const v = params[name];
  if (v === undefined || v === '') return undefined;
  if (typeof v !== 'string' || CONTROL.test(v)) return null;
  return v;
}

/** Checks authorization requests against the registered client applications. */
export class Authorizations {
  constructor(
    private readonly db: Database,
    private readonly pkceAllowPlain: boolean,
  ) {}

  /** Decides what an authorization request leads to (RFC 6749 4.1.2.1 order: client and redirect URI first). */
  async check(params: RawParams): Promise<AuthorizeDecision> {
    const clientId = one(params, 'client_id');
    if (clientId === undefined) return page('The request names no application (client_id is missing).');
    if (clientId === null || !isUuid(clientId)) return page('The application (client_id) is not valid.');
    const app = await this.db.prisma.clientApplication.findUnique({
      where: { id: clientId },
      select: { id: true, projectId: true, name: true, redirectUris: true },
    });
    if (!app) return page('The application (client_id) is not registered with this server.');
    let redirectUri = one(params, 'redirect_uri');
    if (redirectUri === null || (redirectUri && redirectUri.length > MAX_REDIRECT_URI_LENGTH))
      return page('The redirect address (redirect_uri) is not valid.');
    if (redirectUri === undefined) {
      // RFC 6749 3.1.2.3: without one, the client's only registered URI; with several, which one is ambiguous.
      if (app.redirectUris.length !== 1)
        return page(
          app.redirectUris.length === 0
            ? 'The application has no registered redirect address: its administrator must register one.'
            : 'The request names no redirect address (redirect_uri), and the application has several.',
        );
      redirectUri = app.redirectUris[0];
    } else if (!isRegistered(redirectUri, app.redirectUris)) {
      return page(
        'The redirect address (redirect_uri) is not one the application registered (it must match exactly).',
      );
    }
    // From here on, faults go back to the client.
    const state = one(params, 'state');
    const fail = (error: AuthorizeErrorCode, description: string): AuthorizeDecision => ({
      kind: 'redirect',
      redirectUri: redirectUri,
      error,
      description,
      state: typeof state === 'string' ? state : undefined,
    });
    if (state === null) return fail('invalid_request', 'state must be given once');
    if (state && state.length > MAX_STATE)
      return fail('invalid_request', `state is longer than ${MAX_STATE} characters`);
    if (params.request !== undefined)
      return fail('request_not_supported', 'Request objects (request) are not supported');
    if (params.request_uri !== undefined)
      return fail(
        'request_uri_not_supported',
        'Request objects by reference (request_uri) are not supported',
      );
    const responseType = one(params, 'response_type');
    if (responseType === undefined) return fail('invalid_request', 'response_type is required');
    if (responseType !== 'code')
      return fail(
        responseType === null ? 'invalid_request' : 'unsupported_response_type',
        'response_type must be code (the authorization code flow with PKCE)',
      );
    const responseMode = one(params, 'response_mode');
    if (responseMode !== undefined && responseMode !== 'query')
      return fail('invalid_request', 'response_mode must be query');
    const challenge = one(params, 'code_challenge');
    const method = one(params, 'code_challenge_method');
    if (challenge === undefined)
      return fail('invalid_request', 'code_challenge is required (PKCE, RFC 7636)');
    if (challenge === null || method === null)
      return fail('invalid_request', 'PKCE parameters must be given once');
    let pkce: { challenge: string; method: 'S256' | 'plain' };
    try {
      // RFC 7636 4.3: without a method the challenge is plain.
      pkce = checkChallenge(challenge, method ?? 'plain', this.pkceAllowPlain);
    } catch (err) {
      // checkChallenge names /auth/login's fields; here they are the OAuth2 parameters.
      const message = (err as Error).message
        .replaceAll('codeChallengeMethod', 'code_challenge_method')
        .replaceAll('codeChallenge', 'code_challenge');
      return fail('invalid_request', message);
    }
    const scope = one(params, 'scope');
    if (scope === null || (scope && (scope.length > MAX_SCOPE || !SCOPE_RE.test(scope))))
      return fail(
        'invalid_scope',
        'scope must be space-separated scope tokens (RFC 6749 3.3), at most 1000 characters',
      );
    const nonce = one(params, 'nonce');
    if (nonce === null || (nonce && nonce.length > MAX_NONCE_LENGTH))
      return fail('invalid_request', `nonce must be given once, at most ${MAX_NONCE_LENGTH} characters`);
    const loginHint = one(params, 'login_hint');
    if (loginHint === null || (loginHint && loginHint.length > MAX_LOGIN_HINT))
      return fail('invalid_request', `login_hint must be given once, at most ${MAX_LOGIN_HINT} characters`);
    const prompt = one(params, 'prompt');
    if (prompt === null) return fail('invalid_request', 'prompt must be given once');
    const prompts = (prompt ?? '').split(' ').filter(Boolean);
    if (prompts.some((p) => !['none', 'login', 'consent', 'select_account'].includes(p)))
      return fail('invalid_request', 'prompt must be none, login, consent or select_account');
    if (prompts.includes('none')) {
      if (prompts.length > 1)
        return fail('invalid_request', 'prompt=none cannot be combined with other values');
      // No browser session is kept here: a sign-in always needs the user (OIDC Core 3.1.2.6).
      return fail('login_required', 'The user must sign in (this server keeps no browser session)');
    }
    return {
      kind: 'ok',
      request: {
        clientId: app.id,
        projectId: app.projectId,
        clientName: app.name,
        redirectUri,
        state: state || undefined,
        codeChallenge: pkce.challenge,
        codeChallengeMethod: pkce.method,
        scope: normalizeScope(scope),
        nonce: nonce || undefined,
        loginHint: loginHint || undefined,
        prompt: prompt || undefined,
      },
    };
  }
}

function page(message: string): AuthorizeDecision {
  return { kind: 'page', message };
}

/** The redirect URI with the answer's parameters added to its query (RFC 6749 4.1.2: its own query is kept). */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.append(k, v);
  return url.toString();
}
