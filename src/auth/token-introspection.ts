// A presented token's state (RFC 7662 introspection) and its revocation (RFC 7009): both act on the session the
// token names.
import type { Database } from '../db/database.js';
import { OAuthError } from '../core/oauth-error.js';
import { safeEqual, sha256 } from './passwords.js';
import type { SessionAdmin } from './session-admin.js';
import { isActive, type SessionCache } from './session-cache.js';
import type { TokenService } from './tokens.js';

/** Introspects and revokes presented tokens. */
export class TokenIntrospection {
  constructor(
    private readonly db: Database,
    private readonly tokens: TokenService,
    private readonly cache: SessionCache,
    private readonly sessions: SessionAdmin,
  ) {}

  /** RFC 7662: the state of an access or refresh token. */
  async introspect(token: string | undefined): Promise<Record<string, unknown>> {
    if (!token) throw new OAuthError('invalid_request', 'token is required');
    const claims = await this.tokens.verify(token);
    if (!claims) return { active: false };
    const state = await this.cache.get(claims.login_id);
    if (!state || !isActive(state)) return { active: false };
    if (claims.token_use === 'refresh') {
      // A rotated-away refresh token is dead even though its session lives on.
      const row = await this.db.prisma.login.findUnique({
        where: { id: claims.login_id },
        select: { refreshSecretHash: true },
      });
      if (!row?.refreshSecretHash || !safeEqual(row.refreshSecretHash, sha256(claims.refresh_secret ?? '')))
        return { active: false };
    }
    return {
      active: true,
      token_type: claims.token_use === 'access' ? 'Bearer' : 'refresh_token',
      scope: state.scope,
      client_id: claims.client_id ?? state.clientId ?? undefined,
      sub: claims.sub ?? state.userId ?? state.clientId,
      exp: claims.exp,
      iat: claims.iat,
      iss: claims.iss,
      login_id: state.loginId,
      project: state.projectId,
    };
  }

  /** RFC 7009: revokes the session of an access or refresh token; unknown tokens are not an error. */
  async revoke(token: string | undefined): Promise<void> {
    if (!token) throw new OAuthError('invalid_request', 'token is required');
    const claims = await this.tokens.verify(token);
    if (!claims) return;
    await this.sessions.revoke(claims.login_id, claims.login_id, 'oauth2/revoke');
  }
}
