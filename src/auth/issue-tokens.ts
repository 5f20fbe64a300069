// The token endpoint's answer for a Login: an access token (bounded by the session's expiry unless it may be
// refreshed), and with offline_access a refresh token whose secret replaces the previous one.
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { OAuthError } from '../core/oauth-error.js';
import { randomSecret, sha256 } from './passwords.js';
import { hasOfflineAccess } from './scope.js';
import { hasOpenId } from './id-token.js';
import type { TokenService } from './tokens.js';

/** The token endpoint's successful answer (Medplum-compatible). */
export interface TokenResponse {
  token_type: 'Bearer';
  access_token: string;
  expires_in: number;
  refresh_token?: string;
  /** OpenID Connect (authorization_code with `openid`, through a client application). */
  id_token?: string;
  scope: string;
  project: { reference: string };
  profile: { reference: string; display?: string };
}

/** Tokens for a Login; the client they name is the Login's own (a real client of the project), never request text.
 * With `idToken` (the authorization_code grant), an ID token too when the sign-in asked for `openid` through a
 * client application. */
export async function issueTokens(
  db: Database,
  config: Config,
  tokens: TokenService,
  loginId: string,
  opts: { idToken?: boolean } = {},
): Promise<TokenResponse> {
  // Gone when its client or membership was removed since it was made (the deletion cascades to it).
  const login = await db.prisma.login.findUnique({ where: { id: loginId } });
  if (!login) throw sessionGone();
  const profile = login.userId ? `Practitioner/${login.userId}` : `ClientApplication/${login.clientId}`;
  const offline = hasOfflineAccess(login.scope);
  const accessLifetime = Math.max(
    1,
    Math.min(config.accessTokenLifetimeSec, Math.floor((login.expiresAt.getTime() - Date.now()) / 1000)),
  );
  const access = await tokens.signAccess(
    {
      sub: login.userId ?? login.clientId ?? login.id,
      loginId: login.id,
      clientId: login.clientId ?? undefined,
      scope: login.scope,
      profile,
      project: login.projectId,
    },
    offline ? config.accessTokenLifetimeSec : accessLifetime,
  );
  const response: TokenResponse = {
    token_type: 'Bearer',
    access_token: access,
    expires_in: offline ? config.accessTokenLifetimeSec : accessLifetime,
    scope: login.scope,
    project: { reference: `Project/${login.projectId}` },
    profile: { reference: profile },
  };
  if (opts.idToken && login.userId && login.clientId && hasOpenId(login.scope)) {
    const user = await db.prisma.user.findUnique({ where: { id: login.userId }, select: { email: true } });
    if (!user) throw sessionGone();
    response.id_token = await tokens.signId(
      {
        userId: login.userId,
        clientId: login.clientId,
        authMethod: login.authMethod,
        scope: login.scope,
        authTime: login.createdAt,
        nonce: login.nonce,
        email: user.email,
      },
      config.accessTokenLifetimeSec,
    );
  }
  if (offline) {
    const secret = randomSecret();
    const set = await db.prisma.login.updateMany({
      where: { id: login.id },
      data: { refreshSecretHash: sha256(secret) },
    });
    if (set.count === 0) throw sessionGone();
    response.refresh_token = await tokens.signRefresh(login.id, secret, config.refreshTokenLifetimeSec);
  }
  return response;
}

/** The session was deleted before its tokens were issued (a raced removal of its client or member). */
export const sessionGone = () =>
  new OAuthError('invalid_grant', 'The session ended before its tokens were issued; sign in again');
