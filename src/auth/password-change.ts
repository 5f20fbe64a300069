// A signed-in user changes their password (POST /auth/changepassword, GraphQL changePassword): the current password
// is checked (throttled like a sign-in: a stolen access token must not become a way to guess it), the new one meets
// the policy (password-policy.ts), and every other session of the user ends at once on every instance, so a
// password changed because it leaked also shuts out whoever used it. The change (and a wrong current password) is
// audited in the account's projects.
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { Caller } from '../core/caller.js';
import { ApiError, badRequest, conflict, forbidden } from '../core/errors.js';
import { actorOf } from './audit.js';
import type { AuditLog } from './audit-log.js';
import { MAX_PASSWORD_CHARS } from './password-policy.js';
import type { PasswordHasher } from './passwords.js';
import type { SessionAdmin } from './session-admin.js';
import { CheckThrottle } from './throttle.js';

/** Password changes of signed-in users. */
export class PasswordChange {
  private throttle: CheckThrottle;

  constructor(
    private readonly db: Database,
    config: Config,
    private readonly passwords: PasswordHasher,
    private readonly sessions: SessionAdmin,
    private readonly audit: AuditLog,
  ) {
    this.throttle = new CheckThrottle('password change', config.loginThrottle);
  }

  /** Changes the caller's password; returns how many other sessions were ended. */
  async change(caller: Caller, oldPassword: unknown, newPassword: unknown): Promise<number> {
    if (!caller.userId)
      throw forbidden('A client application has no password to change (rotate its secret instead)');
    if (typeof oldPassword !== 'string' || oldPassword === '')
      throw badRequest('oldPassword is required', ['oldPassword']);
    // Longer than any password could be: refused before the (deliberately slow) hash is asked to run.
    if (oldPassword.length > MAX_PASSWORD_CHARS)
      throw badRequest('oldPassword is incorrect', ['oldPassword']);
    const address = caller.request.remoteAddress;
    this.throttle.check(caller.userId, address);
    const user = await this.db.prisma.user.findUnique({
      where: { id: caller.userId },
      select: { id: true, email: true, passwordHash: true },
    });
    if (!user) throw forbidden('The account of this session no longer exists');
    const fresh = await this.passwords.checkNew(newPassword, 'newPassword', user.email);
    const check = await this.passwords.verify(oldPassword, user.passwordHash);
    const actor = actorOf(caller);
    const target = { type: 'user', id: user.id } as const;
    if (!check.ok) {
      this.throttle.fail(caller.userId, address);
      await this.audit.account(this.db.sql, user.id, {
        action: 'password.change',
        outcome: 'failure',
        actor,
        target,
        detail: { reason: 'wrong current password' },
      });
      throw new ApiError(400, 'invalid', 'oldPassword is incorrect', { expression: ['oldPassword'] });
    }
    this.throttle.succeed(caller.userId, address);
    if (fresh === oldPassword)
      throw badRequest('newPassword must differ from the current password', ['newPassword']);
    const passwordHash = await this.passwords.hash(fresh);
    const ended = await this.db.transaction(async (sql) => {
      // Only over the hash just checked: two changes at once cannot both win.
      const changed = await sql(
        `UPDATE "User" SET "passwordHash" = $2 WHERE id = $1::uuid AND "passwordHash" = $3 RETURNING id`,
        [user.id, passwordHash, user.passwordHash],
      );
      if (changed.length === 0) throw conflict('The password was changed meanwhile; sign in again');
      const ids = await this.sessions.revokeUser(
        sql,
        user.id,
        caller.loginId,
        'password changed',
        caller.loginId,
      );
      await this.audit.account(sql, user.id, {
        action: 'password.change',
        actor,
        target,
        detail: { sessionsEnded: ids.length },
      });
      return ids;
    });
    await this.sessions.announceRevoked(ended);
    return ended.length;
  }
}
