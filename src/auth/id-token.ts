// OpenID Connect ID tokens (OIDC Core 2, 3.1.3.6): what the authorization_code grant adds to its answer when the
// sign-in's scope has `openid` and it was made through a client application (the token's audience). Signed ES256
// with the server's key, so a client verifies it against /.well-known/jwks.json.
import crypto from 'node:crypto';
import { SignJWT } from 'jose';
import type { SigningKeys } from './keys.js';

/** The sign-in an ID token describes. */
export interface IdTokenSubject {
  userId: string;
  clientId: string;
  /** password | password+totp | password+recovery */
  authMethod: string;
  scope: string;
  /** When the user authenticated (the password step). */
  authTime: Date;
  nonce: string | null;
  email: string;
}

/** RFC 8176 authentication method references for a sign-in's method. */
export function amrOf(authMethod: string): string[] {
  switch (authMethod) {
    case 'password+totp':
      return ['pwd', 'otp', 'mfa'];
    case 'password+recovery':
      return ['pwd', 'mfa'];
    default:
      return ['pwd'];
  }
}

/** True when a sign-in's scope asks for OpenID Connect. */
export function hasOpenId(scope: string): boolean {
  return scope.split(' ').includes('openid');
}

/** Signs the ID token of a sign-in: iss, sub, aud, exp, iat, auth_time, nonce (when sent), amr, and the email with
 * the `email` scope. */
export function signIdToken(
  keys: SigningKeys,
  issuer: string,
  s: IdTokenSubject,
  lifetimeSec: number,
): Promise<string> {
  const scopes = s.scope.split(' ');
  const claims: Record<string, unknown> = {
    auth_time: Math.floor(s.authTime.getTime() / 1000),
    amr: amrOf(s.authMethod),
  };
  if (s.nonce) claims.nonce = s.nonce;
  if (scopes.includes('email')) claims.email = s.email;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: keys.alg, kid: keys.kid, typ: 'JWT' })
    .setIssuer(issuer)
    .setSubject(s.userId)
    .setAudience(s.clientId)
    .setIssuedAt()
    .setJti(crypto.randomUUID())
    .setExpirationTime(Math.ceil(Date.now() / 1000) + lifetimeSec)
    .sign(keys.privateKey);
}
