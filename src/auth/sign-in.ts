// Password sign-in (POST /auth/login): checks the password, throttled, and creates a Login holding a one-time
// authorization code bound to a PKCE challenge (and to a client, when one is named, with one of its registered
// redirect URIs when one is given). Tokens come later, from the authorization_code grant (grants.ts). A user with a
// second factor (or in a project that requires one) gets a Login that waits for it instead, without a code
// (mfa-sign-in.ts). Each sign-in and failed sign-in is audited here, in the service, whichever route called it.
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { Prisma } from '../generated/prisma/client.js';
import { ApiError, badRequest } from '../core/errors.js';
import { recordAudit, sqlOf, type AuditActor } from './audit.js';
import type { AuditLog } from './audit-log.js';
import { checkChallenge } from './pkce.js';
import { randomSecret, sha256, type PasswordHasher } from './passwords.js';
import { normalizeScope, sessionLifetimeMs } from './scope.js';
import { CheckThrottle } from './throttle.js';
import { isRegistered, MAX_REDIRECT_URI_LENGTH } from './redirect-uris.js';
import { isUuid } from './uuid.js';
import type { LoginResult, MfaSignIn } from './mfa-sign-in.js';

/** Where a sign-in came from. */
export interface ClientInfo {
  userAgent?: string;
  remoteAddress?: string;
}

export interface LoginInput {
  email: string;
  password: string;
  scope?: string;
  codeChallenge?: string;
  codeChallengeMethod?: string;
  projectId?: string;
  clientId?: string;
  /** One of the client's registered redirect URIs; the code exchange must repeat it (RFC 6749 4.1.3). */
  redirectUri?: string;
  /** OpenID Connect: repeated in the ID token the code is exchanged for (OIDC Core 3.1.2.1). */
  nonce?: string;
}

/** Longest nonce accepted (OIDC sets none; an opaque value a client makes, typically 16-64 characters). */
export const MAX_NONCE_LENGTH = 512;

/** Password sign-in. */
export class PasswordSignIn {
  private throttle: CheckThrottle;

  constructor(
    private readonly db: Database,
    private readonly config: Config,
    private readonly passwords: PasswordHasher,
    private readonly mfa: MfaSignIn,
    private readonly audit: AuditLog,
  ) {
    this.throttle = new CheckThrottle('sign-in', config.loginThrottle);
  }

  /** Checks the password and creates a Login with a one-time authorization code, or one waiting for its second
   * factor. */
  async login(input: LoginInput, client: ClientInfo): Promise<LoginResult> {
    if (typeof input.email !== 'string' || !input.email) throw badRequest('email is required', ['email']);
    if (typeof input.password !== 'string' || !input.password)
      throw badRequest('password is required', ['password']);
    const pkce = checkChallenge(input.codeChallenge, input.codeChallengeMethod, this.config.pkceAllowPlain);
    if (input.projectId !== undefined && !isUuid(input.projectId))
      throw badRequest('projectId is not a valid id', ['projectId']);
    if (input.clientId !== undefined && input.clientId !== '' && !isUuid(input.clientId))
      throw badRequest('clientId is not a valid client id', ['clientId']);
    const redirectUri = input.redirectUri || undefined;
    if (redirectUri !== undefined && !input.clientId)
      throw badRequest("redirectUri needs a clientId: it must be one of that client's redirect URIs", [
        'redirectUri',
      ]);
    if (redirectUri !== undefined && redirectUri.length > MAX_REDIRECT_URI_LENGTH)
      throw badRequest(`redirectUri is longer than ${MAX_REDIRECT_URI_LENGTH} characters`, ['redirectUri']);
    const nonce = input.nonce || undefined;
    if (nonce !== undefined && nonce.length > MAX_NONCE_LENGTH)
      throw badRequest(`nonce is longer than ${MAX_NONCE_LENGTH} characters`, ['nonce']);
    const email = input.email.trim().toLowerCase().slice(0, 320);
    // Throttled before the (deliberately slow) hash runs; unknown addresses are counted like known ones.
    this.throttle.check(email, client.remoteAddress);
    const user = await this.db.prisma.user.findUnique({
      where: { email },
      include: {
        memberships: { include: { project: { select: { mfaRequired: true } } } },
        mfa: { select: { enrolled: true } },
      },
    });
    const check = await this.passwords.verify(input.password, user?.passwordHash ?? this.passwords.dummyHash);
    const from: AuditActor = { remoteAddress: client.remoteAddress, userAgent: client.userAgent };
    if (!user || !check.ok) {
      this.throttle.fail(email, client.remoteAddress);
      const failed = {
        action: 'signin.failed',
        outcome: 'failure',
        detail: { reason: 'wrong password' },
      } as const;
      // A known account's failure goes to its projects; an unknown address's to the log only (audit.ts).
      if (user)
        await this.audit.account(this.db.sql, user.id, { ...failed, actor: { ...from, userId: user.id } });
      else
        this.audit.unrecorded({ ...failed, actor: from, detail: { reason: 'unknown account' } }, { email });
      throw new ApiError(400, 'invalid', 'Email or password is invalid', { expression: ['password'] });
    }
    this.throttle.succeed(email, client.remoteAddress);
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
    if (memberships.length === 0) {
      await this.audit.account(this.db.sql, user.id, {
        action: 'signin.failed',
        outcome: 'failure',
        actor: { ...from, userId: user.id },
        detail: { reason: 'not a member of the requested project' },
      });
      throw new ApiError(403, 'forbidden', 'User is not a member of the requested project');
    }
    // A user in several projects picks one (by projectId); otherwise the oldest membership is used.
    memberships.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    const membership = memberships[0];
    // The code is bound to the client it was issued to (RFC 6749 4.1.3): only that client may redeem it.
    let clientId: string | undefined;
    if (input.clientId) {
      const app = await this.db.prisma.clientApplication.findUnique({ where: { id: input.clientId } });
      if (!app || app.projectId !== membership.projectId)
        throw badRequest('clientId names no client application of this project', ['clientId']);
      if (redirectUri !== undefined && !isRegistered(redirectUri, app.redirectUris))
        throw badRequest("redirectUri is not one of the client's registered redirect URIs (exact match)", [
          'redirectUri',
        ]);
      clientId = app.id;
    }
    const challenge = await this.mfa.challenge(user, membership.project.mfaRequired);
    // Waiting for a second factor: no code yet, and a short life until the factor comes.
    const code = challenge.pending ? undefined : randomSecret();
    const scope = normalizeScope(input.scope);
    const create = (tx: Prisma.TransactionClient) =>
      tx.login.create({
        data: {
          userId: user.id,
          projectId: membership.projectId,
          membershipId: membership.id,
          clientId,
          redirectUri,
          authMethod: 'password',
          scope,
          userAgent: client.userAgent?.slice(0, 512),
          remoteAddress: client.remoteAddress,
          codeHash: code ? sha256(code) : null,
          codeChallenge: pkce.challenge,
          codeChallengeMethod: pkce.method,
          nonce,
          codeExpiresAt: code ? new Date(Date.now() + this.config.authCodeLifetimeSec * 1000) : null,
          mfaPending: challenge.pending,
          expiresAt: code
            ? new Date(Date.now() + sessionLifetimeMs(this.config, scope))
            : this.mfa.pendingExpiry(),
        },
      });
    const login = await this.db.prisma
      .$transaction(async (tx) => {
        const row = await create(tx);
        // The password step is the sign-in; a second factor that completes it is `signin.mfa` (mfa-sign-in.ts).
        await recordAudit(sqlOf(tx), row.projectId, {
          action: 'signin',
          actor: { ...from, userId: user.id, loginId: row.id, clientId },
          target: { type: 'session', id: row.id },
          detail: { method: 'password', waitsFor: challenge.pending },
        });
        return row;
      })
      .catch(async (err: unknown) => {
        // The client was deleted by its project's admin meanwhile: the foreign key refused the session.
        if (clientId && !(await this.db.prisma.clientApplication.findUnique({ where: { id: clientId } })))
          throw badRequest('clientId names no client application of this project', ['clientId']);
        throw err;
      });
    if (challenge.pending === 'verify') return { login: login.id, mfaRequired: true };
    if (challenge.pending === 'enroll')
      return {
        login: login.id,
        mfaEnrollRequired: true,
        enrollUri: challenge.enrollUri,
        enrollQrCode: challenge.enrollQrCode,
      };
    return { login: login.id, code };
  }
}
