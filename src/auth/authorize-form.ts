// CSRF tokens of the sign-in page (/oauth2/authorize): each form carries an HMAC over its step, the browser's own
// random cookie value, the pending authorization request (and, after the password, the sign-in's id), and
// the time it was made. A form posted from another site lacks the cookie (SameSite=Lax) and a form made for another
// browser or request does not match, so neither signs anyone in (login CSRF). Stateless: any instance on the same
// database checks it (the key derives from the shared signing key). Compared in constant time.
import crypto from 'node:crypto';
import type { AuthorizeRequest } from './authorize.js';
import { safeEqual } from './passwords.js';

/** The form steps a token is made for: the password form, the second-factor code, the enrolment a project requires
 * and the page of recovery codes after it (each form's cancel button posts its step's token). */
export type FormStep = 'password' | 'mfa' | 'enroll' | 'continue';

/** How long a sign-in form stays good (seconds). */
export const FORM_TTL_SEC = 3600;

/** The browser cookie's name (HttpOnly, SameSite=Lax, path /oauth2/). */
export const BROWSER_COOKIE = 'authorize_browser';

/** A fresh browser value for the cookie. */
export function newBrowserId(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** True for a cookie value this server could have made (43 base64url characters). */
export function isBrowserId(v: unknown): v is string {
  return typeof v === 'string' && /^[A-Za-z0-9_-]{43}$/.test(v);
}

/** What the token is bound to, in a fixed order (JSON: no separator ambiguity). */
function binding(
  step: FormStep,
  browser: string,
  req: AuthorizeRequest,
  loginId: string,
  iat: number,
): string {
  return JSON.stringify([
    step,
    browser,
    iat,
    loginId,
    req.clientId,
    req.redirectUri,
    req.state ?? null,
    req.codeChallenge,
    req.codeChallengeMethod,
    req.scope,
    req.nonce ?? null,
  ]);
}

function mac(key: Buffer, data: string): string {
  return crypto.createHmac('sha256', key).update(data).digest('base64url');
}

/** The token of a form for this browser, request and step (`loginId` on the second-factor step). */
export function formToken(
  key: Buffer,
  step: FormStep,
  browser: string,
  req: AuthorizeRequest,
  loginId = '',
  now = Date.now(),
): string {
  const iat = Math.floor(now / 1000);
  return `${iat}.${mac(key, binding(step, browser, req, loginId, iat))}`;
}

/** Whether a posted token is the one this browser's form for this request and step carried, and is fresh. */
export function checkFormToken(
  key: Buffer,
  token: unknown,
  step: FormStep,
  browser: string | undefined,
  req: AuthorizeRequest,
  loginId = '',
  now = Date.now(),
): boolean {
  if (typeof token !== 'string' || !browser) return false;
  const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return false;
  const iat = Number(m[1]);
  const age = now / 1000 - iat;
  // The MAC is compared whatever the age, so timing tells nothing about which part failed.
  const ok = safeEqual(m[2], mac(key, binding(step, browser, req, loginId, iat)));
  return ok && age >= -60 && age <= FORM_TTL_SEC;
}
