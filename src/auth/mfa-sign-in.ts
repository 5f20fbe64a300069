// Sign-in with a second factor: what a right password leads to (a code, or a sign-in waiting for its factor:
// `mfaRequired`, or `mfaEnrollRequired` in a project that requires one), and completing such a sign-in with a code
// or recovery code (POST /auth/mfa/verify) or by enrolling (POST /auth/mfa/login-enroll), as Medplum does. A
// waiting sign-in holds no authorization code, so the token endpoint has nothing to redeem until it completes.
// A completed second step is audited (`signin.mfa`) with the completion, a wrong code as `signin.mfa.failed`.
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { badRequest, conflict } from '../core/errors.js';
import { recordAudit, type AuditActor } from './audit.js';
import type { AuditLog } from './audit-log.js';
import { WrongCode, type Enrollment, type SecondFactor } from './mfa.js';
import { randomSecret, sha256 } from './passwords.js';
import { sessionLifetimeMs } from './scope.js';
import { isUuid } from './uuid.js';

/** What /auth/login (and the MFA steps that complete it) answer. */
export interface LoginResult {
  login: string;
  /** The one-time authorization code, once the sign-in is complete. */
  code?: string;
  /** The user has a second factor: POST /auth/mfa/verify {login, token}. */
  mfaRequired?: boolean;
  /** The project requires a second factor the user lacks: enrol (POST /auth/mfa/login-enroll {login, token}). */
  mfaEnrollRequired?: boolean;
  enrollUri?: string;
  enrollQrCode?: string;
  /** Shown once, when the sign-in enrolled the factor. */
  recoveryCodes?: string[];
}

/** What a sign-in waits for after the password: nothing, a code, or an enrolment. */
export type MfaChallenge = { pending: null } | { pending: 'verify' } | ({ pending: 'enroll' } & Enrollment);

/** Where a step came from (sign-in.ts's ClientInfo; not imported: sign-in.ts imports this file). */
type ClientInfo = { remoteAddress?: string; userAgent?: string };

type PendingLogin = {
  id: string;
  userId: string;
  projectId: string;
  clientId: string | null;
  scope: string;
  mfaPending: string;
};

const loginGone = () => badRequest('login is unknown, expired or already complete: sign in again', ['login']);

/** The second-factor steps of password sign-in. */
export class MfaSignIn {
  constructor(
    private readonly db: Database,
    private readonly config: Config,
    private readonly factor: SecondFactor,
    private readonly audit: AuditLog,
  ) {}

  /** What a right password leads to for this user (`mfa`: their factor, as sign-in read it with the account) in a
   * project that does (or does not) require a factor. */
  async challenge(
    user: { id: string; email: string; mfa: { enrolled: boolean } | null },
    projectRequires: boolean,
  ): Promise<MfaChallenge> {
    if (user.mfa?.enrolled) return { pending: 'verify' };
    if (!projectRequires) return { pending: null };
    return { pending: 'enroll', ...(await this.factor.pendingEnrollment(user.id, user.email)) };
  }

  private async enrolled(userId: string): Promise<boolean> {
    const mfa = await this.db.prisma.userMfa.findUnique({ where: { userId }, select: { enrolled: true } });
    return mfa?.enrolled === true;
  }

  /** When a waiting sign-in expires (it holds no code meanwhile). */
  pendingExpiry(): Date {
    return new Date(Date.now() + this.config.mfaLoginTtlSec * 1000);
  }

  /** Completes a sign-in that waits for a code (TOTP or recovery code); answers as /auth/login does. */
  async verify(loginId: unknown, token: unknown, client: ClientInfo): Promise<LoginResult> {
    const login = await this.pendingLogin(loginId);
    // A sign-in made to enrol, whose user has not enrolled since: say which step it needs.
    if (login.mfaPending === 'enroll' && !(await this.enrolled(login.userId)))
      throw conflict('This sign-in must enrol a second factor first: POST /auth/mfa/login-enroll');
    const actor = this.actor(login, client);
    const used = await this.failureAudited(login, actor, () => this.factor.check(login.userId, token, actor));
    return this.complete(login, used === 'totp' ? 'password+totp' : 'password+recovery', actor);
  }

  /** Completes a sign-in that waits for an enrolment: confirms it with a current code; the answer carries the
   * recovery codes (shown once). */
  async enroll(loginId: unknown, token: unknown, client: ClientInfo): Promise<LoginResult> {
    const login = await this.pendingLogin(loginId);
    if (login.mfaPending !== 'enroll')
      throw conflict('This sign-in waits for a code of the enrolled factor: POST /auth/mfa/verify');
    const actor = this.actor(login, client);
    const recoveryCodes = await this.failureAudited(login, actor, () =>
      this.factor.enrol(login.userId, token, actor),
    );
    return { ...(await this.complete(login, 'password+totp', actor)), recoveryCodes };
  }

  /** The sign-in's user and session, from where this step came. */
  private actor(login: PendingLogin, client: ClientInfo): AuditActor {
    return {
      userId: login.userId,
      loginId: login.id,
      clientId: login.clientId,
      remoteAddress: client.remoteAddress,
      userAgent: client.userAgent,
    };
  }

  /** Runs a check of a code; a wrong one is audited as `signin.mfa.failed` in the sign-in's project. */
  private async failureAudited<T>(
    login: PendingLogin,
    actor: AuditActor,
    check: () => Promise<T>,
  ): Promise<T> {
    try {
      return await check();
    } catch (err) {
      if (err instanceof WrongCode)
        await recordAudit(this.db.sql, login.projectId, {
          action: 'signin.mfa.failed',
          outcome: 'failure',
          actor,
          target: { type: 'session', id: login.id },
          detail: { reason: err.message },
        });
      throw err;
    }
  }

  /** A fresh authorization code for a sign-in that enrolled its factor moments ago and whose code is still unused
   * (the browser sign-in shows the recovery codes first, longer than a code lives, then continues with this). Only
   * within MFA_LOGIN_TTL of the sign-in; the previous code stops working. Internal: the caller proves it is the
   * browser that signed in (authorize-form.ts), as the login id alone is visible to the user and their admins. */
  async renewCode(loginId: unknown): Promise<LoginResult> {
    if (!isUuid(loginId)) throw badRequest('login is not a valid login id', ['login']);
    const code = randomSecret();
    const done = await this.db.sql(
      `UPDATE "Login" SET "codeHash" = $2, "codeExpiresAt" = $3
        WHERE id = $1::uuid AND "authMethod" = 'password+totp' AND "mfaPending" IS NULL AND "codeHash" IS NOT NULL
          AND "codeUsedAt" IS NULL AND "revokedAt" IS NULL AND "expiresAt" > now() AND "createdAt" > $4
        RETURNING id`,
      [
        loginId,
        sha256(code),
        new Date(Date.now() + this.config.authCodeLifetimeSec * 1000),
        new Date(Date.now() - this.config.mfaLoginTtlSec * 1000),
      ],
    );
    if (done.length === 0) throw loginGone();
    return { login: loginId, code };
  }

  /** A sign-in that waits for its second factor; 400 naming `login` otherwise. */
  private async pendingLogin(loginId: unknown): Promise<PendingLogin> {
    if (loginId === undefined || loginId === null || loginId === '')
      throw badRequest('login is required', ['login']);
    if (!isUuid(loginId)) throw badRequest('login is not a valid login id', ['login']);
    const login = await this.db.prisma.login.findUnique({
      where: { id: loginId },
      select: {
        id: true,
        userId: true,
        projectId: true,
        clientId: true,
        scope: true,
        mfaPending: true,
        revokedAt: true,
        expiresAt: true,
      },
    });
    if (!login?.userId || !login.mfaPending || login.revokedAt || login.expiresAt <= new Date())
      throw loginGone();
    return {
      id: login.id,
      userId: login.userId,
      projectId: login.projectId,
      clientId: login.clientId,
      scope: login.scope,
      mfaPending: login.mfaPending,
    };
  }

  /** Gives the sign-in its authorization code and its session lifetime, once (a second completion finds it done). */
  private async complete(login: PendingLogin, authMethod: string, actor: AuditActor): Promise<LoginResult> {
    const code = randomSecret();
    const now = Date.now();
    const done = await this.db.transaction(async (sql) => {
      const rows = await sql(
        `UPDATE "Login" SET "mfaPending" = NULL, "authMethod" = $2, "codeHash" = $3, "codeExpiresAt" = $4,
              "expiresAt" = $5
        WHERE id = $1::uuid AND "mfaPending" IS NOT NULL AND "revokedAt" IS NULL AND "expiresAt" > now()
        RETURNING id`,
        [
          login.id,
          authMethod,
          sha256(code),
          new Date(now + this.config.authCodeLifetimeSec * 1000),
          new Date(now + sessionLifetimeMs(this.config, login.scope)),
        ],
      );
      if (rows.length > 0)
        await recordAudit(sql, login.projectId, {
          action: 'signin.mfa',
          actor,
          target: { type: 'session', id: login.id },
          detail: { method: authMethod },
        });
      return rows;
    });
    if (done.length === 0) throw loginGone();
    return { login: login.id, code };
  }
}
