// PKCE (RFC 7636): the code challenge a sign-in must carry (RFC 9700 2.1.1), and the verifier the code exchange
// must present.
import crypto from 'node:crypto';
import { badRequest } from '../core/errors.js';
import { OAuthError } from '../core/oauth-error.js';
import { safeEqual } from './passwords.js';

/** RFC 7636 4.1: code_verifier = 43*128unreserved. */
const PKCE_VERIFIER_RE = /^[A-Za-z0-9\-._~]{43,128}$/;
/** RFC 7636 4.2: BASE64URL(SHA256(verifier)) without padding is exactly 43 characters. */
const PKCE_S256_RE = /^[A-Za-z0-9_-]{43}$/;

/** Validates /auth/login's PKCE parameters (required); returns what the Login stores. */
export function checkChallenge(
  challenge: string | undefined,
  method: string | undefined,
  allowPlain: boolean,
): { challenge: string; method: 'S256' | 'plain' } {
  if (!challenge) throw badRequest('codeChallenge is required (PKCE, RFC 7636)', ['codeChallenge']);
  const allowed = allowPlain ? 'S256 or plain' : 'S256';
  if (method !== 'S256' && !(allowPlain && method === 'plain'))
    throw badRequest(`codeChallengeMethod must be ${allowed}`, ['codeChallengeMethod']);
  if (method === 'S256' && !PKCE_S256_RE.test(challenge))
    throw badRequest('codeChallenge must be 43 base64url characters for S256 (RFC 7636 4.2)', [
      'codeChallenge',
    ]);
  if (method === 'plain' && !PKCE_VERIFIER_RE.test(challenge))
    throw badRequest('codeChallenge must be 43-128 characters of [A-Za-z0-9-._~] for plain (RFC 7636 4.1)', [
      'codeChallenge',
    ]);
  return { challenge, method };
}

/** Checks a code_verifier against the challenge the Login stored; an OAuth2 error otherwise. */
export function checkVerifier(verifier: string | undefined, challenge: string, method: string): void {
  if (!verifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE)');
  if (!PKCE_VERIFIER_RE.test(verifier))
    throw new OAuthError(
      'invalid_request',
      'code_verifier must be 43-128 characters of [A-Za-z0-9-._~] (RFC 7636 4.1)',
    );
  const computed =
    method === 'S256' ? crypto.createHash('sha256').update(verifier).digest('base64url') : verifier;
  if (!safeEqual(computed, challenge)) throw new OAuthError('invalid_grant', 'Invalid code_verifier (PKCE)');
}
