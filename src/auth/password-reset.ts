// Password reset (issue 24, item 3): a one-time link, single use, short-lived (PASSWORD_RESET_TTL), its secret kept
// as a SHA-256 and compared in constant time. Asked for by email (POST /auth/resetpassword, sent through SMTP_URL)
// with the same answer whether or not the address has an account, or issued by a server administrator from the CLI
// (npm run user:reset-link) where no SMTP server is configured. Using it (POST /auth/setpassword) sets a password
// that meets the policy and ends every session of the account, on every instance. A link's secret is never logged.
// Issuing a link and using it (or failing to) are audited in the account's projects: never the link, its secret or
// its id; a request for an address without an account is logged only (audit.ts).
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { ApiError, badRequest } from '../core/errors.js';
import { sqlOf, type AuditActor, type AuditSql } from './audit.js';
import type { AuditLog } from './audit-log.js';
import { normalizeEmail } from './email.js';
import type { Mailer } from './mailer.js';
import { randomSecret, safeEqual, sha256, type PasswordHasher } from './passwords.js';
import type { SessionAdmin } from './session-admin.js';
import { CheckThrottle } from './throttle.js';
import { isUuid } from './uuid.js';

/** A reset link as issued. */
export interface ResetLink {
  id: string;
  secret: string;
  url: string;
  expiresAt: Date;
}

/** The one answer to a link that does not work, whatever the reason (unknown, wrong secret, used, expired). */
const invalidLink = () =>
  new ApiError(400, 'invalid', 'This password reset link is invalid, used or expired; ask for a new one', {
    expression: ['secret'],
  });

/** Issues and redeems password reset links. */
export class PasswordResets {
  /** Requests per address and email (every request counts: each may send an email). */
  private requests: CheckThrottle;
  /** Failed redemptions per link and address. */
  private redemptions: CheckThrottle;

  constructor(
    private readonly db: Database,
    private readonly config: Config,
    private readonly passwords: PasswordHasher,
    private readonly sessions: SessionAdmin,
    private readonly logger: Logger,
    private readonly audit: AuditLog,
    private readonly mailer?: Mailer,
  ) {
    this.requests = new CheckThrottle('password reset', config.loginThrottle);
    this.redemptions = new CheckThrottle('password reset link', config.loginThrottle);
  }

  /** Emails a reset link to `email` if it has an account; answers alike either way (nothing to tell an attacker). */
  async request(email: unknown, from: AuditActor): Promise<void> {
    const remoteAddress = from.remoteAddress;
    if (!this.mailer)
      throw new ApiError(
        501,
        'not-supported',
        'Password reset by email is not configured on this server (SMTP_URL); a server administrator can issue ' +
          'a reset link (npm run user:reset-link)',
      );
    if (typeof email !== 'string' || email === '') throw badRequest('email is required', ['email']);
    const address = normalizeEmail(email);
    if (!address) throw badRequest('email is not a valid address', ['email']);
    this.requests.check(address, remoteAddress);
    this.requests.fail(address, remoteAddress);
    const user = await this.db.prisma.user.findUnique({ where: { email: address }, select: { id: true } });
    const requested = { action: 'password.reset.request', detail: { via: 'email' } } as const;
    if (!user) {
      this.audit.unrecorded(
        { ...requested, actor: from, detail: { via: 'email', account: false } },
        { email: address },
      );
      return;
    }
    const link = await issueResetLink(this.db, this.config, user.id, (sql) =>
      this.audit.account(sql, user.id, { ...requested, actor: from, target: { type: 'user', id: user.id } }),
    );
    const minutes = Math.round(this.config.passwordResetTtlSec / 60);
    // Not awaited: the answer's timing must not tell a known address from an unknown one.
    this.mailer
      .send({
        to: address,
        subject: 'Reset your password',
        text:
          `Someone, hopefully you, asked to reset the password of your account at ${this.config.baseUrl}.\n\n` +
          `This link sets a new one. It works once, for ${minutes} minutes:\n\n${link.url}\n\n` +
          'If it was not you, ignore this email: your password stays as it is.\n',
      })
      .catch((err: unknown) =>
        // The message only: an SMTP error can quote the mail, and the mail holds the link.
        this.logger.warn(
          { error: err instanceof Error ? err.message.slice(0, 200) : 'unknown' },
          'reset email not sent',
        ),
      );
  }

  /** Sets the account's password from a link: once, before it expires; ends every session of the account. */
  async redeem(id: unknown, secret: unknown, password: unknown, from: AuditActor): Promise<void> {
    const remoteAddress = from.remoteAddress;
    if (typeof id !== 'string' || !isUuid(id)) throw invalidLink();
    if (typeof secret !== 'string' || secret === '' || secret.length > 200) throw invalidLink();
    this.redemptions.check(id, remoteAddress);
    const row = await this.db.prisma.passwordReset.findUnique({
      where: { id },
      select: {
        userId: true,
        secretHash: true,
        usedAt: true,
        expiresAt: true,
        user: { select: { email: true } },
      },
    });
    const valid =
      row !== null &&
      safeEqual(sha256(secret), row.secretHash) &&
      row.usedAt === null &&
      row.expiresAt.getTime() > Date.now();
    if (!valid) {
      this.redemptions.fail(id, remoteAddress);
      // A link of a known account: someone tries it (wrong secret, used or expired). The link's id names it only.
      if (row)
        await this.audit.account(this.db.sql, row.userId, {
          action: 'password.reset',
          outcome: 'failure',
          actor: from,
          target: { type: 'user', id: row.userId },
          detail: { reason: 'invalid, used or expired link' },
        });
      throw invalidLink();
    }
    const passwordHash = await this.passwords.hashNew(password, 'password', row.user.email);
    const ended = await this.db.transaction(async (sql) => {
      // Only while still unused and unexpired: two redemptions at once cannot both win.
      const used = await sql(
        `UPDATE "PasswordReset" SET "usedAt" = now()
          WHERE id = $1::uuid AND "usedAt" IS NULL AND "expiresAt" > now() RETURNING id`,
        [id],
      );
      if (used.length === 0) throw invalidLink();
      await sql(`UPDATE "User" SET "passwordHash" = $2 WHERE id = $1::uuid`, [row.userId, passwordHash]);
      const ids = await this.sessions.revokeUser(sql, row.userId, `password-reset:${id}`, 'password reset');
      await this.audit.account(sql, row.userId, {
        action: 'password.reset',
        actor: { ...from, userId: row.userId },
        target: { type: 'user', id: row.userId },
        detail: { sessionsEnded: ids.length },
      });
      return ids;
    });
    await this.sessions.announceRevoked(ended);
  }
}

/** A new reset link for the account (its older unused links stop working): for the email, and for the CLI.
 * `audited` records it, in the same transaction (the email's request, or the CLI's). */
export async function issueResetLink(
  db: Database,
  config: Pick<Config, 'baseUrl' | 'passwordResetTtlSec' | 'passwordResetUrl'>,
  userId: string,
  audited: (sql: AuditSql) => Promise<unknown>,
): Promise<ResetLink> {
  const secret = randomSecret();
  const expiresAt = new Date(Date.now() + config.passwordResetTtlSec * 1000);
  const row = await db.prisma.$transaction(async (tx) => {
    await tx.passwordReset.updateMany({ where: { userId, usedAt: null }, data: { usedAt: new Date() } });
    const created = await tx.passwordReset.create({
      data: { userId, secretHash: sha256(secret), expiresAt },
      select: { id: true },
    });
    await audited(sqlOf(tx));
    return created;
  });
  const page = config.passwordResetUrl ?? `${config.baseUrl}auth/setpassword`;
  const url = `${page}${page.includes('?') ? '&' : '?'}id=${row.id}&secret=${secret}`;
  return { id: row.id, secret, url, expiresAt };
}
