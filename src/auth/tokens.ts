// Access and refresh tokens: ES256 JWTs naming their Login. Verification results are cached per token string
// (bounded), so the hot path costs a map lookup; the Login's state is checked separately on every request.
import crypto from 'node:crypto';
import { SignJWT, jwtVerify, type JWTPayload } from 'jose';
import type { SigningKeys } from './keys.js';
import { signIdToken, type IdTokenSubject } from './id-token.js';

export interface AccessClaims extends JWTPayload {
  login_id: string;
  /** Marks the token kind so a refresh token is never accepted as an access token. */
  token_use: 'access' | 'refresh';
  client_id?: string;
  scope?: string;
  /** Refresh tokens only: the secret whose hash the Login stores (rotated on each use). */
  refresh_secret?: string;
}

const MAX_CACHE = 20_000;

/** Signs and verifies this server's tokens. */
export class TokenService {
  private verified = new Map<string, AccessClaims>();

  constructor(
    private keys: SigningKeys,
    /** Read at each use: the base URL is final only once the server knows its port. */
    private issuerOf: () => string,
  ) {}

  private get issuer(): string {
    return this.issuerOf();
  }

  /** Signs an access token for a Login. */
  async signAccess(
    claims: {
      sub: string;
      loginId: string;
      clientId?: string;
      scope: string;
      profile: string;
      project: string;
    },
    lifetimeSec: number,
  ): Promise<string> {
    return (
      new SignJWT({
        login_id: claims.loginId,
        token_use: 'access',
        client_id: claims.clientId,
        scope: claims.scope,
        profile: claims.profile,
        project: claims.project,
      })
        .setProtectedHeader({ alg: this.keys.alg, kid: this.keys.kid, typ: 'JWT' })
        .setSubject(claims.sub)
        .setIssuer(this.issuer)
        .setIssuedAt()
        .setJti(crypto.randomUUID())
        // Rounded up: with whole-second claims, rounding down could leave a 1 s token already expired on arrival.
        .setExpirationTime(Math.ceil(Date.now() / 1000) + lifetimeSec)
        .sign(this.keys.privateKey)
    );
  }

  /** Signs a refresh token carrying the Login id and its current refresh secret. */
  async signRefresh(loginId: string, secret: string, lifetimeSec: number): Promise<string> {
    return new SignJWT({ login_id: loginId, token_use: 'refresh', refresh_secret: secret })
      .setProtectedHeader({ alg: this.keys.alg, kid: this.keys.kid, typ: 'JWT' })
      .setIssuer(this.issuer)
      .setIssuedAt()
      .setExpirationTime(Math.ceil(Date.now() / 1000) + lifetimeSec)
      .sign(this.keys.privateKey);
  }

  /** Signs an OpenID Connect ID token (id-token.ts). */
  signId(subject: IdTokenSubject, lifetimeSec: number): Promise<string> {
    return signIdToken(this.keys, this.issuer, subject, lifetimeSec);
  }

  /** The claims of a token verified before and not yet expired; undefined when it must be verified (see verify). */
  verifiedCached(token: string): AccessClaims | undefined {
    const hit = this.verified.get(token);
    return hit && (typeof hit.exp !== 'number' || hit.exp > Date.now() / 1000) ? hit : undefined;
  }

  /** Verifies a token's signature and expiry; undefined when it is not one of ours or has expired. */
  async verify(token: string): Promise<AccessClaims | undefined> {
    const hit = this.verified.get(token);
    const now = Date.now() / 1000;
    if (hit) {
      if (typeof hit.exp === 'number' && hit.exp <= now) {
        this.verified.delete(token);
        return undefined;
      }
      return hit;
    }
    try {
      const { payload } = await jwtVerify<AccessClaims>(token, this.keys.publicKey, {
        issuer: this.issuer,
        algorithms: [this.keys.alg],
      });
      if (
        typeof payload.login_id !== 'string' ||
        (payload.token_use !== 'access' && payload.token_use !== 'refresh')
      ) {
        return undefined;
      }
      if (this.verified.size >= MAX_CACHE) {
        // Drop the oldest entry (Map keeps insertion order).
        const first = this.verified.keys().next().value;
        if (first !== undefined) this.verified.delete(first);
      }
      this.verified.set(token, payload);
      return payload;
    } catch {
      return undefined;
    }
  }
}
