// The OAuth2 token grants (RFC 6749 4.1, 4.4, 6): authorization_code with PKCE (and the sign-in's redirect URI
// repeated exactly), client_credentials, refresh_token with rotation and replay detection (RFC 9700 4.14.2).
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { OAuthError } from '../core/oauth-error.js';
import { publicClientRefused, type ClientAuthenticator, type ClientCredentials } from './client-auth.js';
import { recordAudit, sqlOf } from './audit.js';
import { issueTokens, type TokenResponse } from './issue-tokens.js';
import { sha256 } from './passwords.js';
import { checkVerifier } from './pkce.js';
import { normalizeScope, sessionLifetimeMs } from './scope.js';
import type { SessionAdmin } from './session-admin.js';
import { isActive, type SessionCache } from './session-cache.js';
import type { ClientInfo } from './sign-in.js';
import type { TokenService } from './tokens.js';

/** Issues tokens for the three grants. */
export class TokenGrants {
  constructor(
    private readonly db: Database,
    private readonly config: Config,
    private readonly tokens: TokenService,
    private readonly cache: SessionCache,
    private readonly sessions: SessionAdmin,
    private readonly clients: ClientAuthenticator,
  ) {}

  /** grant_type=authorization_code: a code is good once (a second use revokes the Login, RFC 6749 4.1.2); PKCE is
   * required (RFC 7636); a code issued to a client is redeemed only by that client, authenticated (RFC 6749 4.1.3). */
  async exchangeCode(
    code: string,
    verifier: string | undefined,
    client: ClientCredentials,
    redirectUri?: string,
  ): Promise<TokenResponse> {
    if (!code) throw new OAuthError('invalid_request', 'code is required');
    // The client authenticates before the code is looked at: a wrong secret neither burns nor reveals the code.
    const clientId = await this.clients.requesting(client);
    const now = new Date();
    const claimed = await this.db.sql<{ id: string }>(
      `UPDATE "Login" SET "codeUsedAt" = $2 WHERE "codeHash" = $1 AND "codeUsedAt" IS NULL RETURNING id`,
      [sha256(code), now],
    );
    if (claimed.length === 0) {
      const reused = await this.db.prisma.login.findUnique({ where: { codeHash: sha256(code) } });
      if (reused) {
        await this.sessions.revoke(reused.id, 'system', 'authorization code reused', {
          clientId,
          remoteAddress: client.remoteAddress,
        });
        throw new OAuthError('invalid_grant', 'Authorization code was already used; the session is revoked');
      }
      throw new OAuthError('invalid_grant', 'Invalid authorization code');
    }
    const login = await this.db.prisma.login.findUniqueOrThrow({ where: { id: claimed[0].id } });
    if (login.revokedAt) throw new OAuthError('invalid_grant', 'Session has been revoked');
    // Never reached while a sign-in waits for its second factor (it has no code), but never redeemable either.
    if (login.mfaPending)
      throw new OAuthError('invalid_grant', 'The sign-in has not passed its second factor');
    if (!login.codeExpiresAt || login.codeExpiresAt < now)
      throw new OAuthError('invalid_grant', 'Authorization code has expired');
    if (!login.codeChallenge || !login.codeChallengeMethod)
      throw new OAuthError('invalid_grant', 'Authorization code was issued without PKCE');
    checkVerifier(verifier, login.codeChallenge, login.codeChallengeMethod);
    if ((login.clientId ?? undefined) !== clientId) {
      throw new OAuthError(
        'invalid_grant',
        login.clientId
          ? 'Authorization code was issued to another client'
          : 'Authorization code was issued without a client; redeem it without client credentials',
      );
    }
    // RFC 6749 4.1.3: a sign-in that named a redirect URI is redeemed with the identical one (exact match).
    if (login.redirectUri !== null && redirectUri !== login.redirectUri)
      throw new OAuthError(
        'invalid_grant',
        redirectUri
          ? 'redirect_uri is not the one the sign-in named'
          : 'redirect_uri is required: the sign-in named one',
      );
    await this.db.prisma.login.update({ where: { id: login.id }, data: { granted: true } });
    this.cache.invalidate(login.id);
    await this.cache.announce(login.id, { wait: false });
    return issueTokens(this.db, this.config, this.tokens, login.id, { idToken: true });
  }

  /** grant_type=client_credentials: a confidential client application signs in as itself (a public one cannot). */
  async clientCredentials(
    clientId: string | undefined,
    clientSecret: string | undefined,
    client: ClientInfo,
    scope?: string,
  ): Promise<TokenResponse> {
    if (!clientId || !clientSecret) {
      if (clientId && (await this.clients.find(clientId))?.public) throw publicClientRefused();
      throw new OAuthError('invalid_request', 'client_id and client_secret are required');
    }
    const app = await this.clients.authenticate(clientId, clientSecret, client.remoteAddress);
    const membership = await this.db.prisma.projectMembership.findFirst({
      where: { clientId: app.id, projectId: app.projectId },
    });
    if (!membership) throw new OAuthError('invalid_client', 'Client application has no project membership');
    const sc = normalizeScope(scope);
    const login = await this.db.prisma
      .$transaction(async (tx) => {
        const row = await tx.login.create({
          data: {
            clientId: app.id,
            projectId: app.projectId,
            membershipId: membership.id,
            authMethod: 'client_credentials',
            scope: sc,
            userAgent: client.userAgent?.slice(0, 512),
            remoteAddress: client.remoteAddress,
            granted: true,
            expiresAt: new Date(Date.now() + sessionLifetimeMs(this.config, sc)),
          },
        });
        await recordAudit(sqlOf(tx), app.projectId, {
          action: 'signin',
          actor: {
            clientId: app.id,
            loginId: row.id,
            remoteAddress: client.remoteAddress,
            userAgent: client.userAgent,
          },
          target: { type: 'session', id: row.id },
          detail: { method: 'client_credentials' },
        });
        return row;
      })
      .catch(async (err: unknown) => {
        // Deleted by its project's admin since it authenticated: the foreign key refused the session.
        if (!(await this.clients.find(app.id)))
          throw new OAuthError('invalid_client', 'Invalid client credentials');
        throw err;
      });
    return issueTokens(this.db, this.config, this.tokens, login.id).catch((err: unknown) => {
      // Deleted just after: the session went with the client.
      if (err instanceof OAuthError && err.oauthCode === 'invalid_grant')
        throw new OAuthError('invalid_client', 'Invalid client credentials');
      throw err;
    });
  }

  /** grant_type=refresh_token: rotates the refresh secret; a replayed old token ends the session. A session made
   * through a client is refreshed only by that client, authenticated. */
  async refresh(refreshToken: string | undefined, client: ClientCredentials = {}): Promise<TokenResponse> {
    if (!refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required');
    const clientId = await this.clients.requesting(client);
    const claims = await this.tokens.verify(refreshToken);
    if (!claims || claims.token_use !== 'refresh' || !claims.refresh_secret) {
      throw new OAuthError('invalid_grant', 'Invalid refresh token');
    }
    const state = await this.cache.get(claims.login_id);
    if (!state || !isActive(state))
      throw new OAuthError('invalid_grant', 'Session has ended (revoked or expired)');
    if ((state.clientId ?? undefined) !== clientId) {
      if (state.clientId && !clientId)
        throw new OAuthError(
          'invalid_client',
          'This refresh token belongs to a client: authenticate that client',
        );
      throw new OAuthError('invalid_grant', 'Refresh token was issued to another client');
    }
    const rotated = await this.db.sql<{ id: string }>(
      `UPDATE "Login" SET "refreshSecretHash" = NULL, "expiresAt" = $3
        WHERE id = $1 AND "refreshSecretHash" = $2 AND "revokedAt" IS NULL AND "expiresAt" > now()
        RETURNING id`,
      [
        claims.login_id,
        sha256(claims.refresh_secret),
        new Date(Date.now() + this.config.refreshTokenLifetimeSec * 1000),
      ],
    );
    if (rotated.length === 0) {
      // The token is ours (signature checked) and its session was active, but its secret is no longer the current
      // one: it was rotated away, so two parties hold it. RFC 9700 4.14.2: end the whole session, on every instance.
      await this.sessions.revoke(claims.login_id, 'system', 'refresh token replay', {
        clientId,
        remoteAddress: client.remoteAddress,
      });
      throw new OAuthError(
        'invalid_grant',
        'Refresh token was already used (replay detected); the session is revoked',
      );
    }
    this.cache.invalidate(claims.login_id);
    // The session's expiry moved: other instances must not keep the old one (no need to wait for them).
    await this.cache.announce(claims.login_id, { wait: false });
    return issueTokens(this.db, this.config, this.tokens, claims.login_id);
  }
}
