// A second factor (TOTP, RFC 6238) of a signed-in user: status, enrolment (a pending secret, confirmed by a current
// code, which hands out recovery codes once), disabling it (password or code re-checked, throttled), the throttled
// check of a code or recovery code that sign-in uses (mfa-sign-in.ts), and the project setting that makes a factor
// mandatory for members. Medplum's /auth/mfa/* endpoints (routes in mfa-routes.ts); docs/sessions-and-security.md.
// Enrolment, disabling and a used recovery code are audited in the account's projects, with the change.
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { Caller } from '../core/caller.js';
import { ApiError, badRequest, conflict, forbidden, notFound } from '../core/errors.js';
import { actorOf, recordAudit, sqlOf, type AuditActor } from './audit.js';
import type { AuditLog } from './audit-log.js';
import { MAX_PASSWORD_CHARS } from './password-policy.js';
import type { PasswordHasher } from './passwords.js';
import type { SessionAdmin } from './session-admin.js';
import { CheckThrottle } from './throttle.js';
import {
  looksLikeTotp,
  newRecoveryCodes,
  newTotpSecret,
  normalizeRecoveryCode,
  qrDataUrl,
  recoveryCodeHash,
  totpStep,
  totpUri,
} from './totp.js';
import { isUuid } from './uuid.js';

/** Which factor a check accepted. */
export type FactorUsed = 'totp' | 'recovery';

/** A pending enrolment as the user's authenticator app takes it. */
export interface Enrollment {
  enrollUri: string;
  /** The URI as a QR code (PNG data URL). */
  enrollQrCode: string;
}

/** A caller's second-factor status. */
export interface MfaStatus {
  enrolled: boolean;
  /** Unused recovery codes (null when not enrolled). */
  recoveryCodesLeft: number | null;
  /** The caller's project requires a second factor. */
  required: boolean;
}

/** The outcome of setProjectMfaRequired. */
export interface ProjectMfaSetting {
  projectId: string;
  mfaRequired: boolean;
  sessionsEnded: number;
}

/** Longest token looked at: a 6-digit code or a recovery code (with its dashes) is far shorter. */
const MAX_TOKEN_CHARS = 64;

/** A token as typed: a TOTP code or a recovery code; 400 naming `token` when it can be neither. */
export function parseToken(token: unknown): { kind: 'totp' | 'recovery'; value: string } {
  if (token === undefined || token === null || token === '') throw badRequest('token is required', ['token']);
  if (typeof token !== 'string') throw badRequest('token must be a string', ['token']);
  if (token.length <= MAX_TOKEN_CHARS) {
    if (looksLikeTotp(token)) return { kind: 'totp', value: token.replace(/\s/g, '') };
    const recovery = normalizeRecoveryCode(token);
    if (recovery) return { kind: 'recovery', value: recovery };
  }
  throw badRequest('token must be a 6-digit code from the authenticator app, or a recovery code', ['token']);
}

/** A well-formed code that is wrong (or already used): what the audit records as a failure. */
export class WrongCode extends ApiError {
  constructor(message = 'token is not a valid code') {
    super(400, 'invalid', message, { expression: ['token'] });
  }
}

const invalidToken = () => new WrongCode();

/** Second factors of users, and the project setting that makes one mandatory. */
export class SecondFactor {
  /** Wrong codes, per account and address, per address, per account (shared by every check of a code). */
  private codeThrottle: CheckThrottle;
  /** Wrong passwords when disabling, with the sign-in limits. */
  private passwordThrottle: CheckThrottle;

  constructor(
    private readonly db: Database,
    private readonly config: Config,
    private readonly passwords: PasswordHasher,
    private readonly sessions: SessionAdmin,
    private readonly audit: AuditLog,
  ) {
    this.codeThrottle = new CheckThrottle('second factor', config.mfaThrottle);
    this.passwordThrottle = new CheckThrottle('password', config.loginThrottle);
  }

  /** The issuer authenticator apps show: MFA_ISSUER, else the host name of BASE_URL. */
  private issuer(): string {
    return this.config.mfaIssuer ?? new URL(this.config.baseUrl).hostname;
  }

  /** The user's pending enrolment, its secret made on first call and kept until confirmed (so that scanning the
   * code twice gives the same entry); 409 once enrolled: the secret is never shown again. */
  async pendingEnrollment(userId: string, email: string): Promise<Enrollment> {
    await this.db.sql(
      `INSERT INTO "UserMfa" ("userId", secret) VALUES ($1::uuid, $2) ON CONFLICT ("userId") DO NOTHING`,
      [userId, await newTotpSecret()],
    );
    const mfa = await this.db.prisma.userMfa.findUnique({ where: { userId } });
    if (!mfa) throw forbidden('The account of this session no longer exists');
    if (mfa.enrolled)
      throw conflict('A second factor is already enrolled; disable it first to enrol another');
    const enrollUri = await totpUri(this.issuer(), email, mfa.secret);
    return { enrollUri, enrollQrCode: await qrDataUrl(enrollUri) };
  }

  /** The caller's status. */
  async status(caller: Caller): Promise<MfaStatus> {
    const userId = requireUser(caller);
    const [mfa, project] = await Promise.all([
      this.db.prisma.userMfa.findUnique({
        where: { userId },
        select: { enrolled: true, recoveryCodes: true },
      }),
      this.db.prisma.project.findUnique({ where: { id: caller.projectId }, select: { mfaRequired: true } }),
    ]);
    const enrolled = mfa?.enrolled === true;
    return {
      enrolled,
      recoveryCodesLeft: enrolled ? (mfa?.recoveryCodes.length ?? 0) : null,
      required: project?.mfaRequired === true,
    };
  }

  /** Starts (or shows again) the caller's enrolment. */
  async startEnrollment(caller: Caller): Promise<Enrollment> {
    const userId = requireUser(caller);
    const user = await this.db.prisma.user.findUnique({ where: { id: userId }, select: { email: true } });
    if (!user) throw forbidden('The account of this session no longer exists');
    return this.pendingEnrollment(userId, user.email);
  }

  /** Confirms the caller's pending enrolment with a current code; returns the recovery codes (shown once). */
  confirmEnrollment(caller: Caller, token: unknown): Promise<string[]> {
    return this.enrol(requireUser(caller), token, actorOf(caller));
  }

  /** Confirms a user's pending enrolment with a current code (throttled); returns the new recovery codes. */
  async enrol(userId: string, token: unknown, actor: AuditActor): Promise<string[]> {
    const address = actor.remoteAddress;
    const t = parseToken(token);
    if (t.kind !== 'totp')
      throw badRequest('token must be the 6-digit code the authenticator app shows', ['token']);
    this.codeThrottle.check(userId, address);
    const mfa = await this.db.prisma.userMfa.findUnique({ where: { userId } });
    if (!mfa)
      throw conflict(
        'No enrolment was started: GET /auth/mfa/status (or startMfaEnrollment) gives the secret',
      );
    if (mfa.enrolled)
      throw conflict('A second factor is already enrolled; disable it first to enrol another');
    const step = await totpStep(mfa.secret, t.value);
    if (step === undefined) {
      this.codeThrottle.fail(userId, address);
      throw invalidToken();
    }
    const { codes, hashes } = newRecoveryCodes();
    // Only over the secret just checked, and once: two confirmations at once cannot both hand out codes.
    await this.db.prisma.$transaction(async (tx) => {
      const done = await tx.userMfa.updateMany({
        where: { userId, secret: mfa.secret, enrolled: false },
        data: { enrolled: true, enrolledAt: new Date(), lastStep: step, recoveryCodes: hashes },
      });
      if (done.count === 0) throw conflict('The enrolment changed meanwhile; start again');
      await this.audit.account(sqlOf(tx), userId, {
        action: 'mfa.enroll',
        actor,
        target: { type: 'user', id: userId },
        detail: { factor: 'totp' },
      });
    });
    this.codeThrottle.succeed(userId, address);
    return codes;
  }

  /** Checks a code of an enrolled user (throttled): a TOTP code not older than the last one used (no replay), or
   * an unused recovery code, which is used up. 400 naming `token` otherwise. */
  async check(userId: string, token: unknown, actor: AuditActor): Promise<FactorUsed> {
    const address = actor.remoteAddress;
    const t = parseToken(token);
    this.codeThrottle.check(userId, address);
    const mfa = await this.db.prisma.userMfa.findUnique({ where: { userId } });
    if (!mfa?.enrolled) throw conflict('No second factor is enrolled');
    if (t.kind === 'totp') {
      const step = await totpStep(mfa.secret, t.value);
      if (step !== undefined) {
        const taken = await this.db.sql(
          `UPDATE "UserMfa" SET "lastStep" = $2 WHERE "userId" = $1::uuid AND enrolled AND secret = $3
             AND ("lastStep" IS NULL OR "lastStep" < $2) RETURNING "userId"`,
          [userId, step, mfa.secret],
        );
        if (taken.length > 0) {
          this.codeThrottle.succeed(userId, address);
          return 'totp';
        }
        // A code of a step already used (or older): someone replays it, or the user typed it twice.
        this.codeThrottle.fail(userId, address);
        throw new WrongCode('This code was already used; wait for the next one');
      }
    } else {
      // The stored hashes are compared in SQL: the hash of a high-entropy code reveals nothing to time.
      const used = await this.db.transaction(async (sql) => {
        const rows = await sql<{ left: number }>(
          `UPDATE "UserMfa" SET "recoveryCodes" = array_remove("recoveryCodes", $2)
            WHERE "userId" = $1::uuid AND enrolled AND $2 = ANY("recoveryCodes")
            RETURNING cardinality("recoveryCodes") AS left`,
          [userId, recoveryCodeHash(t.value)],
        );
        if (rows.length > 0)
          await this.audit.account(sql, userId, {
            action: 'mfa.recovery.used',
            actor,
            target: { type: 'user', id: userId },
            detail: { recoveryCodesLeft: Number(rows[0].left) },
          });
        return rows;
      });
      if (used.length > 0) {
        this.codeThrottle.succeed(userId, address);
        return 'recovery';
      }
    }
    this.codeThrottle.fail(userId, address);
    throw invalidToken();
  }

  /** Disables the caller's second factor, with their password or a current code re-checked (both throttled).
   * Refused while a project of theirs requires one. */
  async disable(caller: Caller, password: unknown, token: unknown): Promise<void> {
    const userId = requireUser(caller);
    const address = caller.request.remoteAddress;
    const byPassword = password !== undefined && password !== null && password !== '';
    if (!byPassword && (token === undefined || token === null || token === ''))
      throw badRequest('password is required (or token: a current code)', ['password']);
    if (byPassword && typeof password !== 'string')
      throw badRequest('password must be a string', ['password']);
    const mfa = await this.db.prisma.userMfa.findUnique({ where: { userId }, select: { enrolled: true } });
    if (!mfa?.enrolled) throw conflict('No second factor is enrolled');
    const requiring = await this.db.prisma.projectMembership.count({
      where: { userId, project: { mfaRequired: true } },
    });
    if (requiring > 0)
      throw conflict('A project of this account requires a second factor: it cannot be disabled');
    const actor = actorOf(caller);
    const target = { type: 'user', id: userId } as const;
    const by = byPassword ? 'password' : 'code';
    try {
      if (byPassword) await this.checkPassword(userId, password as string, address);
      else await this.check(userId, token, actor);
    } catch (err) {
      if (err instanceof WrongCode || err instanceof WrongPassword)
        await this.audit.account(this.db.sql, userId, {
          action: 'mfa.disable',
          outcome: 'failure',
          actor,
          target,
          detail: { reason: `wrong ${by}` },
        });
      throw err;
    }
    // The secret goes with it: a later enrolment makes a new one (a lost or stolen device is no use then).
    await this.db.prisma.$transaction(async (tx) => {
      await tx.userMfa.deleteMany({ where: { userId } });
      await this.audit.account(sqlOf(tx), userId, { action: 'mfa.disable', actor, target, detail: { by } });
    });
  }

  private async checkPassword(userId: string, password: string, address: string | undefined): Promise<void> {
    // Longer than any password could be: refused before the (deliberately slow) hash is asked to run.
    if (password.length > MAX_PASSWORD_CHARS) throw badRequest('password is incorrect', ['password']);
    this.passwordThrottle.check(userId, address);
    const user = await this.db.prisma.user.findUnique({
      where: { id: userId },
      select: { passwordHash: true },
    });
    if (!user) throw forbidden('The account of this session no longer exists');
    if (!(await this.passwords.verify(password, user.passwordHash)).ok) {
      this.passwordThrottle.fail(userId, address);
      throw new WrongPassword();
    }
    this.passwordThrottle.succeed(userId, address);
  }

  /** A project admin makes a second factor mandatory (or not) for the project's members. Turning it on ends the
   * sessions of members without one (but the caller's own), on every instance: they sign in again and enrol. */
  async setProjectRequired(
    caller: Caller,
    required: boolean,
    projectId?: unknown,
  ): Promise<ProjectMfaSetting> {
    if (projectId !== undefined && projectId !== null && !isUuid(projectId))
      throw badRequest('projectId is not a valid project id', ['projectId']);
    if (!caller.admin) throw forbidden('Only a project admin may change whether a second factor is required');
    // Never reveal another project: its id is as unknown as a made-up one.
    if (projectId && projectId !== caller.projectId) throw notFound('Project not found');
    const ended = await this.db.transaction(async (sql) => {
      await sql(`UPDATE "Project" SET "mfaRequired" = $2 WHERE id = $1::uuid`, [caller.projectId, required]);
      const rows = required ? await this.endSessionsWithoutFactor(sql, caller) : [];
      await recordAudit(sql, caller.projectId, {
        action: 'project.mfa.required',
        actor: actorOf(caller),
        target: { type: 'project', id: caller.projectId },
        detail: { required, sessionsEnded: rows.length },
      });
      return rows;
    });
    await this.sessions.announceRevoked(ended);
    return { projectId: caller.projectId, mfaRequired: required, sessionsEnded: ended.length };
  }

  /** Ends the project's sessions of users without a factor (but the caller's own); returns their ids. */
  private async endSessionsWithoutFactor(sql: Database['sql'], caller: Caller): Promise<string[]> {
    const rows = await sql<{ id: string }>(
      `UPDATE "Login" l SET "revokedAt" = now(), "revokedBy" = $2, "revokedReason" = 'second factor required'
        WHERE l."projectId" = $1::uuid AND l."userId" IS NOT NULL AND l."revokedAt" IS NULL AND l.id <> $2::uuid
          AND NOT EXISTS (SELECT 1 FROM "UserMfa" f WHERE f."userId" = l."userId" AND f.enrolled)
        RETURNING l.id`,
      [caller.projectId, caller.loginId],
    );
    return rows.map((r) => r.id);
  }
}

/** A wrong password where one is re-checked: what the audit records as a failure. */
class WrongPassword extends ApiError {
  constructor() {
    super(400, 'invalid', 'password is incorrect', { expression: ['password'] });
  }
}

/** The caller's user id; a client application has no second factor (403). */
function requireUser(caller: Caller): string {
  if (!caller.userId)
    throw forbidden('A client application has no second factor (it signs in with its secret)');
  return caller.userId;
}
