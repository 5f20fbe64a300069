// Accounts, sign-in, tokens and sessions (Logins). The REST and GraphQL layers call these; nothing here knows HTTP.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { Invitation, User } from '../generated/prisma/client.js';
import { badRequest, forbidden, notFound, unauthorized, ApiError } from '../core/errors.js';
import type { Principal } from '../graphql/context.js';
import { OAuthError } from './oauth-error.js';
import { normalizeEmail } from './email.js';
import { PasswordHasher, safeEqual, sha256 } from './passwords.js';
import { CallBudget, CheckThrottle } from './throttle.js';
import { inviteUser, recordInvitation } from './invitations.js';
import { isUuid } from './uuid.js';
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

/** Client credentials a token request carries (form body or HTTP Basic). */
export interface ClientCredentials {
  clientId?: string;
  clientSecret?: string;
  /** Where the request came from (throttling of failed checks). */
  remoteAddress?: string;
}

/** RFC 7636 4.1: code_verifier = 43*128unreserved. */
const PKCE_VERIFIER_RE = /^[A-Za-z0-9\-._~]{43,128}$/;
/** RFC 7636 4.2: BASE64URL(SHA256(verifier)) without padding is exactly 43 characters. */
const PKCE_S256_RE = /^[A-Za-z0-9_-]{43}$/;

/** Validates /auth/login's PKCE parameters (required: RFC 9700 2.1.1); returns what the Login stores. */
function checkChallenge(
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

export { isUuid };

/** The password hasher for a configuration (cost, concurrency, and a queue of 32 waiting hashes per slot). */
export function passwordHasher(config: Config): PasswordHasher {
  return new PasswordHasher({
    cost: config.passwordHashCost,
    concurrency: config.passwordHashConcurrency,
    maxQueue: 32 * config.passwordHashConcurrency,
  });
}

function randomSecret(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** Sign-in, token issuance and session state. */
export class AuthService {
  readonly tokens: TokenService;
  readonly sessions: SessionCache;
  readonly passwords: PasswordHasher;
  private loginThrottle: CheckThrottle;
  private clientThrottle: CheckThrottle;
  private accountInvites: CallBudget;
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
    this.passwords = passwordHasher(config);
    this.loginThrottle = new CheckThrottle('sign-in', config.loginThrottle);
    this.clientThrottle = new CheckThrottle('client authentication', config.clientAuthThrottle);
    this.accountInvites = new CallBudget('createUser/inviteUser', config.accountInviteLimit);
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
    const pkce = checkChallenge(input.codeChallenge, input.codeChallengeMethod, this.config.pkceAllowPlain);
    if (input.projectId !== undefined && !isUuid(input.projectId))
      throw badRequest('projectId is not a valid id', ['projectId']);
    if (input.clientId !== undefined && input.clientId !== '' && !isUuid(input.clientId))
      throw badRequest('clientId is not a valid client id', ['clientId']);
    const email = input.email.trim().toLowerCase().slice(0, 320);
    // Throttled before the (deliberately slow) hash runs; unknown addresses are counted like known ones.
    this.loginThrottle.check(email, client.remoteAddress);
    const user = await this.db.prisma.user.findUnique({ where: { email }, include: { memberships: true } });
    const check = await this.passwords.verify(input.password, user?.passwordHash ?? this.passwords.dummyHash);
    if (!user || !check.ok) {
      this.loginThrottle.fail(email, client.remoteAddress);
      throw new ApiError(400, 'invalid', 'Email or password is invalid', { expression: ['password'] });
    }
    this.loginThrottle.succeed(email, client.remoteAddress);
    if (check.rehash) {
      // A hash from an older, cheaper cost: replace it now that the password is known (transparent to the user).
      const passwordHash = await this.passwords.hash(input.password);
      await this.db.prisma.user.updateMany({
        where: { id: user.id, passwordHash: user.passwordHash },
        data: { passwordHash },
      });
    }
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
        codeChallenge: pkce.challenge,
        codeChallengeMethod: pkce.method,
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

  /** grant_type=authorization_code: a code is good once (a second use revokes the Login, RFC 6749 4.1.2); PKCE is
   * required (RFC 7636); a code issued to a client is redeemed only by that client, authenticated (RFC 6749 4.1.3). */
  async exchangeCode(
    code: string,
    verifier: string | undefined,
    client: ClientCredentials,
  ): Promise<TokenResponse> {
    if (!code) throw new OAuthError('invalid_request', 'code is required');
    // The client authenticates before the code is looked at: a wrong secret neither burns nor reveals the code.
    const clientId = await this.requestingClient(client);
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
    if (!login.codeChallenge || !login.codeChallengeMethod)
      throw new OAuthError('invalid_grant', 'Authorization code was issued without PKCE');
    if (!verifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE)');
    if (!PKCE_VERIFIER_RE.test(verifier))
      throw new OAuthError(
        'invalid_request',
        'code_verifier must be 43-128 characters of [A-Za-z0-9-._~] (RFC 7636 4.1)',
      );
    const computed =
      login.codeChallengeMethod === 'S256'
        ? crypto.createHash('sha256').update(verifier).digest('base64url')
        : verifier;
    if (!safeEqual(computed, login.codeChallenge))
      throw new OAuthError('invalid_grant', 'Invalid code_verifier (PKCE)');
    if ((login.clientId ?? undefined) !== clientId) {
      throw new OAuthError(
        'invalid_grant',
        login.clientId
          ? 'Authorization code was issued to another client'
          : 'Authorization code was issued without a client; redeem it without client credentials',
      );
    }
    await this.db.prisma.login.update({ where: { id: login.id }, data: { granted: true } });
    this.sessions.invalidate(login.id);
    await this.sessions.announce(login.id, { wait: false });
    return this.issueTokens(login.id);
  }

  /** The client a token request names, authenticated; undefined when it names none (empty client_id, as
   * MedplumClient sends without a client). Every client application holds a secret, so every named client is
   * confidential and must authenticate (RFC 6749 3.2.1). */
  private async requestingClient(client: ClientCredentials): Promise<string | undefined> {
    if (!client.clientId && !client.clientSecret) return undefined;
    if (!client.clientId) throw new OAuthError('invalid_client', 'client_secret was given without client_id');
    if (!client.clientSecret)
      throw new OAuthError(
        'invalid_client',
        'Client authentication is required: send client_secret (form or HTTP Basic) with client_id',
      );
    return this.authenticateClient(client.clientId, client.clientSecret, client.remoteAddress);
  }

  /** Checks a client application's id and secret (constant time); throws invalid_client otherwise. */
  async authenticateClient(
    clientId: string | undefined,
    clientSecret: string | undefined,
    address?: string,
  ): Promise<string> {
    const subject = (clientId ?? '').slice(0, 64);
    this.clientThrottle.check(subject, address);
    const app =
      clientId && isUuid(clientId)
        ? await this.db.prisma.clientApplication.findUnique({ where: { id: clientId } })
        : null;
    // Compare even when the client is unknown, so timing does not tell which ids exist.
    const matches = safeEqual(sha256(clientSecret ?? ''), app?.secretHash ?? sha256(''));
    if (!app || !clientSecret || !matches) {
      this.clientThrottle.fail(subject, address);
      throw new OAuthError('invalid_client', 'Invalid client credentials');
    }
    this.clientThrottle.succeed(subject, address);
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
    const appId = await this.authenticateClient(clientId, clientSecret, client.remoteAddress);
    const app = await this.db.prisma.clientApplication.findUniqueOrThrow({ where: { id: appId } });
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
    return this.issueTokens(login.id);
  }

  /** grant_type=refresh_token: rotates the refresh secret; a replayed old token ends the session. A session made
   * through a client is refreshed only by that client, authenticated. */
  async refresh(refreshToken: string | undefined, client: ClientCredentials = {}): Promise<TokenResponse> {
    if (!refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required');
    const clientId = await this.requestingClient(client);
    const claims = await this.tokens.verify(refreshToken);
    if (!claims || claims.token_use !== 'refresh' || !claims.refresh_secret) {
      throw new OAuthError('invalid_grant', 'Invalid refresh token');
    }
    const state = await this.sessions.get(claims.login_id);
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
      await this.revoke(claims.login_id, 'system', 'refresh token replay');
      throw new OAuthError(
        'invalid_grant',
        'Refresh token was already used (replay detected); the session is revoked',
      );
    }
    this.sessions.invalidate(claims.login_id);
    // The session's expiry moved: other instances must not keep the old one (no need to wait for them).
    await this.sessions.announce(claims.login_id, { wait: false });
    return this.issueTokens(claims.login_id);
  }

  /** Tokens for a Login; the client they name is the Login's own (a real client of the project), never request text. */
  private async issueTokens(loginId: string): Promise<TokenResponse> {
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
        clientId: login.clientId ?? undefined,
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

  /** A project admin adds an address to the project (issue 12 item 2). A new address gets an account with the
   * given password and a membership. An address that already has an account gets an invitation its holder may
   * accept (the account, its password and memberships are untouched), and the caller gets the same answer as for a
   * new account: a User with the given email, a new id, no names. Both branches hash the password and write
   * twice, so the timing does not tell them apart either. */
  async createUser(caller: Principal, email: string, password: string, admin: boolean): Promise<User> {
    if (!caller.admin) throw forbidden('Only a project admin can create users');
    const normalized = normalizeEmail(email);
    if (!normalized) throw badRequest('email is not a valid address', ['email']);
    if (password.length < 8 || password.length > 1024)
      throw badRequest('password must be 8-1024 characters', ['password']);
    this.takeInvite(caller);
    const passwordHash = await this.passwords.hash(password);
    const create = () =>
      this.db.prisma.$transaction(async (tx) => {
        if (await tx.user.findUnique({ where: { email: normalized }, select: { id: true } })) {
          await recordInvitation(tx, caller, normalized, admin);
          return undefined;
        }
        const user = await tx.user.create({ data: { email: normalized, passwordHash } });
        await tx.projectMembership.create({ data: { projectId: caller.projectId, userId: user.id, admin } });
        return user;
      });
    let user: User | undefined;
    try {
      user = await create();
    } catch (err) {
      // Two concurrent creations of one address: the loser's address now has an account, so it invites.
      if ((err as { code?: unknown }).code !== 'P2002') throw err;
      user = await create();
    }
    return user ?? unknownAccountAnswer(normalized);
  }

  /** inviteUser with the admin's and the project's call budget (shared with createUser). */
  async inviteUser(caller: Principal, email: string, admin: boolean): Promise<Invitation> {
    if (!caller.admin) throw forbidden('Only a project admin can invite users');
    if (!normalizeEmail(email)) throw badRequest('email is not a valid address', ['email']);
    this.takeInvite(caller);
    return inviteUser(this.db, caller, email, admin);
  }

  private takeInvite(caller: Principal): void {
    this.accountInvites.take(caller.userId ?? caller.clientId ?? caller.loginId, caller.projectId);
  }
}

/** What createUser answers for an address that already has an account: shaped like a fresh account (new random
 * id, no names, created now), so that nothing in it tells the caller the address was known. The id names no row;
 * if the holder accepts the invitation, the project sees them under their own account's id. */
function unknownAccountAnswer(email: string): User {
  return {
    id: crypto.randomUUID(),
    email,
    passwordHash: '',
    firstName: null,
    lastName: null,
    serverAdmin: false,
    createdAt: new Date(),
  };
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
