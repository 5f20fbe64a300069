// GET and POST /oauth2/authorize: the browser sign-in of third-party apps (RFC 6749 4.1 with PKCE, OIDC Core 3.1).
// GET checks the request (authorize.ts) and shows the password form; each POST checks it again from the form, then
// its CSRF token (authorize-form.ts), then runs the same sign-in operations as /auth/login, /auth/mfa/verify and
// /auth/mfa/login-enroll (so their throttles and hooks apply) and answers with the next page (the code of the second
// factor, or its enrolment and recovery codes) or a 303 to the client's redirect URI. Pages are never cached,
// framed, or sent with a Referer; they load nothing and post only here (or, by the redirect that follows a post, to
// the client's own origin).
import express, { type Request, type Response, type Router } from 'express';
import { graphql } from '../generated/gql/index.js';
import { ApiError } from '../core/errors.js';
import { runOperation } from '../graphql/executor.js';
import { contextFor } from '../rest/request.js';
import { asyncHandler } from '../rest/middleware.js';
import { redirectWith, type AuthorizeDecision, type AuthorizeRequest, type RawParams } from './authorize.js';
import {
  BROWSER_COOKIE,
  checkFormToken,
  FORM_TTL_SEC,
  formToken,
  isBrowserId,
  newBrowserId,
  type FormStep,
} from './authorize-form.js';
import { enrolPage, messagePage, mfaPage, passwordPage, recoveryPage, STYLE_HASH } from './authorize-page.js';
import { qrDataUrl } from './totp.js';
import { LoginDoc } from './login-document.js';

const AuthorizeVerifyDoc = graphql(`
  mutation AuthorizeVerifyMfa($login: String!, $token: String!) {
    verifyMfa(login: $login, token: $token) {
      code
    }
  }
`);

const AuthorizeEnrollDoc = graphql(`
  mutation AuthorizeEnrollMfa($login: String!, $token: String!) {
    enrollMfaAtLogin(login: $login, token: $token) {
      recoveryCodes
    }
  }
`);

const AuthorizeRenewDoc = graphql(`
  mutation AuthorizeRenewCode($login: String!) {
    renewLoginCode(login: $login) {
      code
    }
  }
`);

/** Sends a page with the sign-in page's headers; `formTo` is the origin a post's redirect may lead to. */
function sendPage(res: Response, status: number, html: string, formTo?: string): void {
  const formAction = formTo ? `'self' ${formTo}` : "'none'";
  res
    .status(status)
    .setHeader('Cache-Control', 'no-store')
    .setHeader('Pragma', 'no-cache')
    .setHeader(
      'Content-Security-Policy',
      `default-src 'none'; style-src ${STYLE_HASH}; img-src data:; form-action ${formAction}; ` +
        "frame-ancestors 'none'; base-uri 'none'",
    )
    .setHeader('X-Frame-Options', 'DENY')
    .setHeader('Referrer-Policy', 'no-referrer')
    .type('html')
    .send(html);
}

/** Redirects the browser to the client (302 for GET, 303 after a POST: RFC 9700 4.12). */
function sendRedirect(req: Request, res: Response, location: string): void {
  res
    .status(req.method === 'POST' ? 303 : 302)
    .setHeader('Cache-Control', 'no-store')
    .setHeader('Referrer-Policy', 'no-referrer')
    .setHeader('Location', location)
    .end();
}

/** The browser's cookie value, if it has a well-formed one. */
function browserOf(req: Request): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === BROWSER_COOKIE && isBrowserId(value)) return value;
  }
  return undefined;
}

/** The browser's cookie value, set now when it has none. */
function ensureBrowser(req: Request, res: Response): string {
  const existing = browserOf(req);
  if (existing) return existing;
  const id = newBrowserId();
  // The path the browser sees (BASE_URL's, behind a proxy that adds a prefix), so the cookie goes with the posts.
  const base = new URL(req.api.config.baseUrl);
  const secure = base.protocol === 'https:' ? '; Secure' : '';
  res.append(
    'Set-Cookie',
    `${BROWSER_COOKIE}=${id}; Path=${base.pathname}oauth2/; HttpOnly; SameSite=Lax; Max-Age=${FORM_TTL_SEC * 24}` +
      secure,
  );
  return id;
}

/** The GET URL that starts this request again (the link of a page that ends the flow). */
function restartHref(r: AuthorizeRequest): string {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: r.clientId,
    redirect_uri: r.redirectUri,
  });
  for (const [k, v] of [
    ['state', r.state],
    ['code_challenge', r.codeChallenge],
    ['code_challenge_method', r.codeChallengeMethod],
    ['scope', r.scope],
    ['nonce', r.nonce],
  ] as const)
    if (v !== undefined) q.set(k, v);
  return `authorize?${q.toString()}`;
}

/** Answers a decision that is not `ok`; returns the request when it is. */
function settle(req: Request, res: Response, d: AuthorizeDecision): AuthorizeRequest | undefined {
  if (d.kind === 'ok') return d.request;
  if (d.kind === 'page') sendPage(res, 400, messagePage('Sign-in request refused', d.message));
  else
    sendRedirect(
      req,
      res,
      redirectWith(d.redirectUri, { error: d.error, error_description: d.description, state: d.state }),
    );
  return undefined;
}

const originOf = (uri: string) => new URL(uri).origin;

/** Back to the client with the authorization code. */
function sendCode(req: Request, res: Response, r: AuthorizeRequest, code: string): void {
  sendRedirect(req, res, redirectWith(r.redirectUri, { code, state: r.state }));
}

/** A form field's string value ('' when absent or not a single string). */
function field(body: RawParams, name: string): string {
  const v = body[name];
  return typeof v === 'string' ? v : '';
}

/** The page for a throttled step (429 with Retry-After, as /auth/login answers). */
function throttledPage(res: Response, err: ApiError, r: AuthorizeRequest): void {
  const after = err.headers?.['Retry-After'];
  if (after) res.setHeader('Retry-After', after);
  sendPage(
    res,
    429,
    messagePage('Too many attempts', `Too many failed attempts. Try again in ${after ?? 'a few'} seconds.`, {
      href: restartHref(r),
      label: 'Start again',
    }),
  );
}

/** The password step: the same sign-in as /auth/login, bound to the client, redirect URI, PKCE, scope and nonce. */
async function passwordStep(
  req: Request,
  res: Response,
  r: AuthorizeRequest,
  body: RawParams,
): Promise<void> {
  const browser = browserOf(req) as string;
  const key = contextFor(req).services.auth.keys.formKey;
  const email = field(body, 'email').slice(0, 320);
  const again = (status: number, error: string) =>
    sendPage(
      res,
      status,
      passwordPage({ req: r, csrf: formToken(key, 'password', browser, r), email, error }),
      originOf(r.redirectUri),
    );
  const password = field(body, 'password');
  if (!email || !password) return again(400, 'Enter your email and password.');
  let result;
  try {
    const data = await runOperation(
      LoginDoc,
      {
        email,
        password,
        scope: r.scope,
        codeChallenge: r.codeChallenge,
        codeChallengeMethod: r.codeChallengeMethod,
        projectId: r.projectId,
        clientId: r.clientId,
        redirectUri: r.redirectUri,
        nonce: r.nonce,
      },
      contextFor(req),
    );
    result = data.login;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    if (err.status === 429) return throttledPage(res, err, r);
    // The account is not a member of the client's project: the same words, to tell no more than a wrong password.
    if (err.status === 403) return again(403, 'This account cannot sign in to this application.');
    // Another fault (the client deleted meanwhile, ...) is said as it is; a wrong password as sign-in says it.
    if (!err.expression?.some((e) => e === 'email' || e === 'password'))
      return again(err.status, err.message);
    return again(400, 'Email or password is invalid.');
  }
  if (result.code) return sendCode(req, res, r, result.code);
  if (result.mfaRequired)
    return sendPage(
      res,
      200,
      mfaPage({ req: r, login: result.login, csrf: formToken(key, 'mfa', browser, r, result.login) }),
      originOf(r.redirectUri),
    );
  // mfaEnrollRequired: the project requires a factor the user lacks; enrol it here (as /auth/mfa/login-enroll).
  const enrollUri = result.enrollUri ?? '';
  sendPage(
    res,
    200,
    enrolPage({
      req: r,
      login: result.login,
      enrollUri,
      enrollQrCode: result.enrollQrCode ?? '',
      csrf: formToken(key, 'enroll', browser, r, `${result.login} ${enrollUri}`),
    }),
    originOf(r.redirectUri),
  );
}

/** A page that ends a sign-in whose pending state is gone (expired, completed, or revoked meanwhile). */
function expiredPage(res: Response, r: AuthorizeRequest): void {
  sendPage(
    res,
    400,
    messagePage('Sign-in expired', 'This sign-in has expired or was already completed. Start again.', {
      href: restartHref(r),
      label: 'Start again',
    }),
  );
}

/** The enrolment step: the same as /auth/mfa/login-enroll; then the recovery codes, shown once. */
async function enrollStep(req: Request, res: Response, r: AuthorizeRequest, body: RawParams): Promise<void> {
  const browser = browserOf(req) as string;
  const key = contextFor(req).services.auth.keys.formKey;
  const login = field(body, 'login');
  // Bound by the form's token with the login id: it is the URI this server made for this sign-in.
  const enrollUri = field(body, 'enroll_uri');
  const token = field(body, 'token').trim();
  let recoveryCodes: string[] | null | undefined;
  try {
    if (!token) throw new ApiError(400, 'invalid', 'Enter the code.', { expression: ['token'] });
    const data = await runOperation(AuthorizeEnrollDoc, { login, token }, contextFor(req));
    recoveryCodes = data.enrollMfaAtLogin.recoveryCodes;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    if (err.status === 429) return throttledPage(res, err, r);
    if (!err.expression?.includes('token')) return expiredPage(res, r);
    return sendPage(
      res,
      400,
      enrolPage({
        req: r,
        login,
        enrollUri,
        enrollQrCode: await qrDataUrl(enrollUri),
        csrf: formToken(key, 'enroll', browser, r, `${login} ${enrollUri}`),
        error: err.message,
      }),
      originOf(r.redirectUri),
    );
  }
  // The code the enrolment made is never sent: the page of recovery codes may stay open longer than a code lives,
  // so its Continue asks for a fresh one.
  sendPage(
    res,
    200,
    recoveryPage({
      req: r,
      login,
      recoveryCodes: recoveryCodes ?? [],
      csrf: formToken(key, 'continue', browser, r, login),
    }),
    originOf(r.redirectUri),
  );
}

/** After the recovery codes: a fresh code for the enrolled sign-in, and back to the client. */
async function continueStep(
  req: Request,
  res: Response,
  r: AuthorizeRequest,
  body: RawParams,
): Promise<void> {
  let code: string | null | undefined;
  try {
    code = (await runOperation(AuthorizeRenewDoc, { login: field(body, 'login') }, contextFor(req)))
      .renewLoginCode.code;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    return expiredPage(res, r);
  }
  if (!code) throw new Error('renewLoginCode answered without a code');
  sendCode(req, res, r, code);
}

/** The second-factor step: the same completion as /auth/mfa/verify. */
async function mfaStep(req: Request, res: Response, r: AuthorizeRequest, body: RawParams): Promise<void> {
  const browser = browserOf(req) as string;
  const key = contextFor(req).services.auth.keys.formKey;
  const login = field(body, 'login');
  const again = (status: number, error: string) =>
    sendPage(
      res,
      status,
      mfaPage({ req: r, login, csrf: formToken(key, 'mfa', browser, r, login), error }),
      originOf(r.redirectUri),
    );
  const token = field(body, 'token').trim();
  if (!token) return again(400, 'Enter the code.');
  let code: string | null | undefined;
  try {
    code = (await runOperation(AuthorizeVerifyDoc, { login, token }, contextFor(req))).verifyMfa.code;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    if (err.status === 429) return throttledPage(res, err, r);
    if (err.expression?.includes('token')) return again(400, err.message);
    return expiredPage(res, r);
  }
  if (!code) throw new Error('verifyMfa answered without a code');
  sendCode(req, res, r, code);
}

type Step = (req: Request, res: Response, r: AuthorizeRequest, body: RawParams) => Promise<void>;

/** Each form's step and what it does. */
const STEPS: Record<FormStep, Step> = {
  password: passwordStep,
  mfa: mfaStep,
  enroll: enrollStep,
  continue: continueStep,
};

/** What a step's token binds besides the request: nothing for the password, the sign-in after it (and for the
 * enrolment, the URI it shows). */
function boundTo(step: FormStep, body: RawParams): string {
  if (step === 'password') return '';
  if (step === 'enroll') return `${field(body, 'login')} ${field(body, 'enroll_uri')}`;
  return field(body, 'login');
}

/** The first page of a valid request: the password form (and the browser's cookie, when it has none). */
function showSignIn(req: Request, res: Response, request: AuthorizeRequest): void {
  const browser = ensureBrowser(req, res);
  const csrf = formToken(contextFor(req).services.auth.keys.formKey, 'password', browser, request);
  sendPage(
    res,
    200,
    passwordPage({ req: request, csrf, email: request.loginHint }),
    originOf(request.redirectUri),
  );
}

/** A page handler: a 503 on the way (too many password hashes waiting, the database unreachable) is a page too. */
function pageHandler(fn: (req: Request, res: Response) => Promise<void>) {
  return asyncHandler(async (req, res) => {
    try {
      await fn(req, res);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 503 || res.headersSent) throw err;
      const after = err.headers?.['Retry-After'];
      if (after) res.setHeader('Retry-After', after);
      sendPage(res, 503, messagePage('Try again shortly', 'The server is busy. Try again in a moment.'));
    }
  });
}

/** Adds GET and POST /oauth2/authorize to the /oauth2 router. */
export function addAuthorizeRoutes(r: Router): void {
  r.get(
    '/oauth2/authorize',
    pageHandler(async (req, res) => {
      const auth = contextFor(req).services.auth;
      const request = settle(req, res, await auth.authorize.check(req.query as RawParams));
      if (!request) return;
      showSignIn(req, res, request);
    }),
  );

  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 });
  r.post(
    '/oauth2/authorize',
    form,
    pageHandler(async (req, res) => {
      if (!req.is('application/x-www-form-urlencoded'))
        return sendPage(
          res,
          400,
          messagePage('Sign-in request refused', 'The sign-in form was not sent as a form.'),
        );
      const body = (req.body ?? {}) as RawParams;
      const auth = contextFor(req).services.auth;
      const request = settle(req, res, await auth.authorize.check(body));
      if (!request) return;
      // No step: an authorization request sent as a form (OIDC Core 3.1.2.1 allows POST), answered as GET is.
      if (body.step === undefined) return showSignIn(req, res, request);
      const step = field(body, 'step') as FormStep;
      if (!Object.hasOwn(STEPS, step))
        return sendPage(res, 400, messagePage('Sign-in request refused', 'The sign-in form is not valid.'));
      if (!checkFormToken(auth.keys.formKey, body.csrf, step, browserOf(req), request, boundTo(step, body))) {
        // A form from another site or browser, or an old one: nothing is signed in; the user may start again.
        return sendPage(
          res,
          403,
          messagePage(
            'Sign-in form expired',
            'This sign-in form has expired or was not sent from this browser. Start again.',
            { href: restartHref(request), label: 'Start again' },
          ),
        );
      }
      if (field(body, 'cancel')) {
        return sendRedirect(
          req,
          res,
          redirectWith(request.redirectUri, {
            error: 'access_denied',
            error_description: 'The user cancelled the sign-in',
            state: request.state,
          }),
        );
      }
      await STEPS[step](req, res, request, body);
    }),
  );
}
