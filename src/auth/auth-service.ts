// Accounts, sign-in, tokens and sessions (Logins). The REST and GraphQL layers call these; nothing here knows HTTP.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { badRequest, forbidden, notFound, unauthorized, ApiError } from '../graphql/errors.js';
import type { Principal } from '../graphql/context.js';
import { OAuthError } from './oauth-error.js';
import { normalizeEmail } from './email.js';
import { DUMMY_HASH, hashPassword, safeEqual, sha256, verifyPassword } from './passwords.js';
import { SessionCache, type SessionState } from './session-cache.js';
import { TokenService } from './tokens.js';
import type { SigningKeys } from './keys.js';

/** Where a sign-in came from. */
export interface ClientInfo {
  userAgent?: string;
  remoteAddress?: string;
}

/** The token endpoint's successful answer (Medplum-compatible). */
export interface TokenResponse {
  token_type: 'Bearer';
  access_token: string;
  expires_in: number;
  refresh_token?: string;
  scope: string;
  project: { reference: string };
  profile: { reference: string; display?: string };
}

export interface LoginInput {
  email: string;
  password: string;
  scope?: string;
  codeChallenge?: string;
  codeChallengeMethod?: string;
  projectId?: string;
  clientId?: string;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when s is a UUID (ids are UUIDs; anything else is rejected before it reaches SQL). */
export function isUuid(s: unknown): s is string {
  return typeof s === 'string' && UUID_RE.test(s);
}

function randomSecret(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** Sign-in, token issuance and session state. */
export class AuthService {
  readonly tokens: TokenService;
  readonly sessions: SessionCache;
  private touched = new Set<string>();
  private flushTimer: NodeJS.Timeout;

  constructor(
    private db: Database,
    private config: Config,
    readonly keys: SigningKeys,
    private logger: Logger,
  ) {
    this.tokens = new TokenService(keys, () => config.baseUrl);
    this.sessions = new SessionCache(db, logger);
    // lastUsed is written in batches: a write per request would cost a round trip per request.
    this.flushTimer = setInterval(() => void this.flushLastUsed(), 15_000);
    this.flushTimer.unref();
  }

  async start(): Promise<void> {
    await this.sessions.start();
  }

  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.sessions.stop();
    await this.flushLastUsed();
  }

  /** Writes the pending lastUsed times. */
  async flushLastUsed(): Promise<void> {
    if (this.touched.size === 0) return;
    const ids = [...this.touched];
    this.touched.clear();
    try {
      await this.db.sql(`UPDATE "Login" SET "lastUsed" = now() WHERE id = ANY($1::uuid[])`, [ids]);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'could not record session lastUsed');
    }
  }

  // ------------------------------------------------------------------ authentication of requests

  /** Resolves a bearer token to its caller; throws 401 when the token or its Login is not valid now. */
  /** The caller for a token whose claims and session are both cached and active; undefined otherwise (then call
   * authenticate, which also answers the errors). Synchronous: the common case costs no promise. */
  authenticateCached(token: string): Principal | undefined {
    const claims = this.tokens.verifiedCached(token);
    if (!claims || claims.token_use !== 'access') return undefined;
    const state = this.sessions.cached(claims.login_id);
    if (!state || !isActive(state)) return undefined;
    this.touched.add(state.loginId);
    return toPrincipal(state);
  }

  async authenticate(token: string): Promise<Principal> {
    const claims = await this.tokens.verify(token);
    if (!claims || claims.token_use !== 'access') throw unauthorized('Invalid or expired access token');
    const state = await this.sessions.get(claims.login_id);
    if (!state || !isActive(state)) throw unauthorized('Session has ended (revoked or expired)');
    this.touched.add(state.loginId);
    return toPrincipal(state);
  }

  // ------------------------------------------------------------------ sign-in

  /** POST /auth/login: checks the password and creates a Login with a one-time authorization code. */
  async login(
    input: LoginInput,
    client: ClientInfo,
  ): Promise<{ login: string; code?: string; memberships?: unknown[] }> {
    if (typeof input.email !== 'string' || !input.email) throw badRequest('email is required', ['email']);
    if (typeof input.password !== 'string' || !input.password)
      throw badRequest('password is required', ['password']);
    if (input.codeChallengeMethod && !['S256', 'plain'].includes(input.codeChallengeMethod)) {
      throw badRequest('codeChallengeMethod must be S256 or plain', ['codeChallengeMethod']);
    }
    if (input.codeChallenge && !input.codeChallengeMethod) {
      throw badRequest('codeChallengeMethod is required with codeChallenge', ['codeChallengeMethod']);
    }
    if (input.projectId !== undefined && !isUuid(input.projectId))
      throw badRequest('projectId is not a valid id', ['projectId']);
    if (input.clientId !== undefined && input.clientId !== '' && !isUuid(input.clientId))
      throw badRequest('clientId is not a valid client id', ['clientId']);
    const user = await this.db.prisma.user.findUnique({
      where: { email: input.email.trim().toLowerCase() },
      include: { memberships: true },
    });
    const ok = await verifyPassword(input.password, user?.passwordHash ?? DUMMY_HASH);
    if (!user || !ok)
      throw new ApiError(400, 'invalid', 'Email or password is invalid', { expression: ['password'] });
    let memberships = user.memberships;
    if (input.projectId) memberships = memberships.filter((m) => m.projectId === input.projectId);
    if (memberships.length === 0)
      throw new ApiError(403, 'forbidden', 'User is not a member of the requested project');
    // A user in several projects picks one (by projectId); otherwise the oldest membership is used.
    memberships.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    const membership = memberships[0];
    // The code is bound to the client it was issued to (RFC 6749 4.1.3): only that client may redeem it.
    let clientId: string | undefined;
    if (input.clientId) {
      const app = await this.db.prisma.clientApplication.findUnique({ where: { id: input.clientId } });
      if (!app || app.projectId !== membership.projectId)
        throw badRequest('clientId names no client application of this project', ['clientId']);
      clientId = app.id;
    }
    const code = randomSecret();
    const login = await this.db.prisma.login.create({
      data: {
        userId: user.id,
        projectId: membership.projectId,
        membershipId: membership.id,
        clientId,
        authMethod: 'password',
        scope: normalizeScope(input.scope),
        userAgent: client.userAgent?.slice(0, 512),
        remoteAddress: client.remoteAddress,
        codeHash: sha256(code),
        codeChallenge: input.codeChallenge,
        codeChallengeMethod: input.codeChallenge ? input.codeChallengeMethod : undefined,
        codeExpiresAt: new Date(Date.now() + this.config.authCodeLifetimeSec * 1000),
        expiresAt: new Date(Date.now() + this.sessionLifetimeMs(normalizeScope(input.scope))),
      },
    });
    return { login: login.id, code };
  }

  private sessionLifetimeMs(scope: string): number {
    return (
      (scope.split(' ').includes('offline_access')
        ? this.config.refreshTokenLifetimeSec
        : this.config.sessionLifetimeSec) * 1000
    );
  }

  /** grant_type=authorization_code: a code is good once; a second use revokes the Login (RFC 6749 4.1.2). */
  async exchangeCode(
    code: string,
    verifier: string | undefined,
    clientId: string | undefined,
  ): Promise<TokenResponse> {
    if (!code) throw new OAuthError('invalid_request', 'code is required');
    const now = new Date();
    const claimed = await this.db.sql<{ id: string }>(
      `UPDATE "Login" SET "codeUsedAt" = $2 WHERE "codeHash" = $1 AND "codeUsedAt" IS NULL RETURNING id`,
      [sha256(code), now],
    );
    if (claimed.length === 0) {
      const reused = await this.db.prisma.login.findUnique({ where: { codeHash: sha256(code) } });
      if (reused) {
        await this.revoke(reused.id, 'system', 'authorization code reused');
        throw new OAuthError('invalid_grant', 'Authorization code was already used; the session is revoked');
      }
      throw new OAuthError('invalid_grant', 'Invalid authorization code');
    }
    const login = await this.db.prisma.login.findUniqueOrThrow({ where: { id: claimed[0].id } });
    if (login.revokedAt) throw new OAuthError('invalid_grant', 'Session has been revoked');
    if (!login.codeExpiresAt || login.codeExpiresAt < now)
      throw new OAuthError('invalid_grant', 'Authorization code has expired');
    if (login.codeChallenge) {
      if (!verifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE)');
      const computed =
        login.codeChallengeMethod === 'S256'
          ? crypto.createHash('sha256').update(verifier).digest('base64url')
          : verifier;
      if (!safeEqual(computed, login.codeChallenge))
        throw new OAuthError('invalid_grant', 'Invalid code_verifier (PKCE)');
    }
    if (login.clientId && clientId !== login.clientId) {
      throw new OAuthError('invalid_grant', 'Authorization code was issued to another client');
    }
    await this.db.prisma.login.update({ where: { id: login.id }, data: { granted: true } });
    this.sessions.invalidate(login.id);
    await this.sessions.announce(login.id, { wait: false });
    return this.issueTokens(login.id, clientId);
  }

  /** Checks a client application's id and secret (constant time); throws invalid_client otherwise. */
  async authenticateClient(clientId: string | undefined, clientSecret: string | undefined): Promise<string> {
    const app =
      clientId && isUuid(clientId)
        ? await this.db.prisma.clientApplication.findUnique({ where: { id: clientId } })
        : null;
    // Compare even when the client is unknown, so timing does not tell which ids exist.
    const matches = safeEqual(sha256(clientSecret ?? ''), app?.secretHash ?? sha256(''));
    if (!app || !clientSecret || !matches)
      throw new OAuthError('invalid_client', 'Invalid client credentials');
    return app.id;
  }

  /** grant_type=client_credentials: the client application signs in as itself. */
  async clientCredentials(
    clientId: string | undefined,
    clientSecret: string | undefined,
    client: ClientInfo,
    scope?: string,
  ): Promise<TokenResponse> {
    if (!clientId || !clientSecret)
      throw new OAuthError('invalid_request', 'client_id and client_secret are required');
    const app = isUuid(clientId)
      ? await this.db.prisma.clientApplication.findUnique({ where: { id: clientId } })
      : null;
    // Compare even when the client is unknown, so timing does not tell which ids exist.
    const matches = safeEqual(sha256(clientSecret), app?.secretHash ?? sha256(''));
    if (!app || !matches) throw new OAuthError('invalid_client', 'Invalid client credentials');
    const membership = await this.db.prisma.projectMembership.findFirst({
      where: { clientId: app.id, projectId: app.projectId },
    });
    if (!membership) throw new OAuthError('invalid_client', 'Client application has no project membership');
    const sc = normalizeScope(scope);
    const login = await this.db.prisma.login.create({
      data: {
        clientId: app.id,
        projectId: app.projectId,
        membershipId: membership.id,
        authMethod: 'client_credentials',
        scope: sc,
        userAgent: client.userAgent?.slice(0, 512),
        remoteAddress: client.remoteAddress,
        granted: true,
        expiresAt: new Date(Date.now() + this.sessionLifetimeMs(sc)),
      },
    });
    return this.issueTokens(login.id, app.id);
  }

  /** grant_type=refresh_token: rotates the refresh secret (a replayed old token is refused). */
  async refresh(refreshToken: string | undefined): Promise<TokenResponse> {
    if (!refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required');
    const claims = await this.tokens.verify(refreshToken);
    if (!claims || claims.token_use !== 'refresh' || !claims.refresh_secret) {
      throw new OAuthError('invalid_grant', 'Invalid refresh token');
    }
    const state = await this.sessions.get(claims.login_id);
    if (!state || !isActive(state))
      throw new OAuthError('invalid_grant', 'Session has ended (revoked or expired)');
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
    if (rotated.length === 0)
      throw new OAuthError('invalid_grant', 'Refresh token was already used or revoked');
    this.sessions.invalidate(claims.login_id);
    // The session's expiry moved: other instances must not keep the old one (no need to wait for them).
    await this.sessions.announce(claims.login_id, { wait: false });
    return this.issueTokens(claims.login_id, claims.client_id);
  }

  private async issueTokens(loginId: string, clientId: string | undefined): Promise<TokenResponse> {
    const login = await this.db.prisma.login.findUniqueOrThrow({ where: { id: loginId } });
    const profile = login.userId ? `Practitioner/${login.userId}` : `ClientApplication/${login.clientId}`;
    const accessLifetime = Math.max(
      1,
      Math.min(
        this.config.accessTokenLifetimeSec,
        Math.floor((login.expiresAt.getTime() - Date.now()) / 1000),
      ),
    );
    const access = await this.tokens.signAccess(
      {
        sub: login.userId ?? login.clientId ?? login.id,
        loginId: login.id,
        clientId: clientId ?? login.clientId ?? undefined,
        scope: login.scope,
        profile,
        project: login.projectId,
      },
      login.scope.split(' ').includes('offline_access') ? this.config.accessTokenLifetimeSec : accessLifetime,
    );
    const response: TokenResponse = {
      token_type: 'Bearer',
      access_token: access,
      expires_in: login.scope.split(' ').includes('offline_access')
        ? this.config.accessTokenLifetimeSec
        : accessLifetime,
      scope: login.scope,
      project: { reference: `Project/${login.projectId}` },
      profile: { reference: profile },
    };
    if (login.scope.split(' ').includes('offline_access')) {
      const secret = randomSecret();
      await this.db.prisma.login.update({
        where: { id: login.id },
        data: { refreshSecretHash: sha256(secret) },
      });
      response.refresh_token = await this.tokens.signRefresh(
        login.id,
        secret,
        this.config.refreshTokenLifetimeSec,
      );
    }
    return response;
  }

  // ------------------------------------------------------------------ sessions

  /** Revokes a Login (idempotent); every instance refuses its tokens from the next request on. */
  async revoke(loginId: string, revokedBy: string, reason: string): Promise<void> {
    await this.db.sql(
      `UPDATE "Login" SET "revokedAt" = now(), "revokedBy" = $2, "revokedReason" = $3 WHERE id = $1 AND "revokedAt" IS NULL`,
      [loginId, revokedBy, reason],
    );
    this.sessions.markRevoked(loginId);
    await this.sessions.announce(loginId);
  }

  /** The Login row a caller may act on: their own user's, or (for a project admin) a member's of that project. */
  async findRevocable(caller: Principal, loginId: unknown): Promise<string> {
    if (typeof loginId !== 'string' || !loginId) throw badRequest('loginId is required', ['loginId']);
    if (!isUuid(loginId)) throw badRequest('loginId is not a valid login id', ['loginId']);
    const login = await this.db.prisma.login.findUnique({ where: { id: loginId } });
    if (!login) throw notFound('Login not found');
    // A client application's own sessions are its client_credentials logins, not users' logins made through it.
    const own = caller.userId
      ? login.userId === caller.userId
      : login.userId === null && login.clientId === caller.clientId;
    const asAdmin = caller.admin && login.projectId === caller.projectId;
    // Never reveal that another user's session exists.
    if (!own && !asAdmin) throw notFound('Login not found');
    return login.id;
  }

  /** The active sessions (not revoked, not expired, tokens issued) of the caller's user or client. */
  async activeSessions(caller: Principal): Promise<SessionRow[]> {
    // Raw SQL: this runs on every /auth/me.
    const owner = caller.userId ? `"userId" = $1` : `"clientId" = $1 AND "userId" IS NULL`;
    return this.db.sql<SessionRow>(
      `SELECT id, "userAgent", "remoteAddress", "authMethod", "createdAt", "lastUsed" FROM "Login"
        WHERE ${owner} AND "revokedAt" IS NULL AND granted AND "expiresAt" > now()
        ORDER BY "createdAt" DESC`,
      [caller.userId ?? caller.clientId],
    );
  }

  /** Ends every session of the caller's user but the current one; returns how many. */
  async revokeOthers(caller: Principal): Promise<number> {
    const others = (await this.activeSessions(caller)).filter((l) => l.id !== caller.loginId);
    await Promise.all(others.map((l) => this.revoke(l.id, caller.loginId, 'revokeOtherSessions')));
    return others.length;
  }

  /** RFC 7662: the state of an access or refresh token. */
  async introspect(token: string | undefined): Promise<Record<string, unknown>> {
    if (!token) throw new OAuthError('invalid_request', 'token is required');
    const claims = await this.tokens.verify(token);
    if (!claims) return { active: false };
    const state = await this.sessions.get(claims.login_id);
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
  async revokeToken(token: string | undefined): Promise<void> {
    if (!token) throw new OAuthError('invalid_request', 'token is required');
    const claims = await this.tokens.verify(token);
    if (!claims) return;
    await this.revoke(claims.login_id, claims.login_id, 'oauth2/revoke');
  }

  // ------------------------------------------------------------------ users

  /** A project admin adds a user (new or existing account) to the project. */
  async createUser(caller: Principal, email: string, password: string, admin: boolean) {
    if (!caller.admin) throw forbidden('Only a project admin can create users');
    const normalized = normalizeEmail(email);
    if (!normalized) throw badRequest('email is not a valid address', ['email']);
    if (password.length < 8) throw badRequest('password must be at least 8 characters', ['password']);
    const passwordHash = await hashPassword(password);
    return this.db.prisma.$transaction(async (tx) => {
      const existing = await tx.user.findUnique({ where: { email: normalized } });
      if (existing) {
        const member = await tx.projectMembership.findFirst({
          where: { userId: existing.id, projectId: caller.projectId },
        });
        if (member)
          throw new ApiError(409, 'duplicate', 'A user with this email is already a member of the project');
        await tx.projectMembership.create({
          data: { projectId: caller.projectId, userId: existing.id, admin },
        });
        return existing;
      }
      const user = await tx.user.create({ data: { email: normalized, passwordHash } });
      await tx.projectMembership.create({ data: { projectId: caller.projectId, userId: user.id, admin } });
      return user;
    });
  }
}

/** An active session as listed by /auth/me. */
export type SessionRow = {
  id: string;
  userAgent: string | null;
  remoteAddress: string | null;
  authMethod: string;
  createdAt: Date;
  lastUsed: Date | null;
};

/** Not revoked, not expired, and tokens were issued. */
export function isActive(s: SessionState): boolean {
  return !s.revoked && s.granted && s.expiresAt > Date.now();
}

function toPrincipal(s: SessionState): Principal {
  return {
    loginId: s.loginId,
    userId: s.userId,
    clientId: s.clientId,
    projectId: s.projectId,
    membershipId: s.membershipId,
    admin: s.admin,
    scope: s.scope,
    authMethod: s.authMethod,
  };
}

function normalizeScope(scope: string | undefined): string {
  const parts = (scope ?? 'openid').split(/\s+/).filter(Boolean);
  return [...new Set(parts.length ? parts : ['openid'])].join(' ');
}
