// Accounts a project admin adds: createUser (a new account, or an invitation when the address has one, answered
// alike) and inviteUser, sharing a call budget per admin and per project. Both audited in their transaction; the
// two branches of createUser alike (`member.create`, the answer's id), so the log tells the admin no more than the
// answer did.
import crypto from 'node:crypto';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { Invitation, User } from '../generated/prisma/client.js';
import type { Caller } from '../core/caller.js';
import { badRequest, forbidden } from '../core/errors.js';
import { normalizeEmail } from './email.js';
import { actorOf, recordAudit, sqlOf } from './audit.js';
import { inviteUser, recordInvitation } from './invitations.js';
import type { PasswordHasher } from './passwords.js';
import { CallBudget } from './throttle.js';

/** Adds accounts to projects. */
export class Accounts {
  private budget: CallBudget;

  constructor(
    private readonly db: Database,
    config: Config,
    private readonly passwords: PasswordHasher,
  ) {
    this.budget = new CallBudget('createUser/inviteUser', config.accountInviteLimit);
  }

  /** A project admin adds an address to the project (issue 12 item 2). A new address gets an account with the
   * given password and a membership. An address that already has an account gets an invitation its holder may
   * accept (the account, its password and memberships are untouched), and the caller gets the same answer as for a
   * new account: a User with the given email, a new id, no names. Both branches hash the password and write
   * twice, so the timing does not tell them apart either. */
  async createUser(caller: Caller, email: string, password: string, admin: boolean): Promise<User> {
    if (!caller.admin) throw forbidden('Only a project admin can create users');
    const normalized = normalizeEmail(email);
    if (!normalized) throw badRequest('email is not a valid address', ['email']);
    const checked = await this.passwords.checkNew(password, 'password', normalized);
    this.take(caller);
    const passwordHash = await this.passwords.hash(checked);
    const create = () =>
      this.db.prisma.$transaction(async (tx) => {
        let user: User;
        if (await tx.user.findUnique({ where: { email: normalized }, select: { id: true } })) {
          await recordInvitation(tx, caller, normalized, admin);
          user = unknownAccountAnswer(normalized);
        } else {
          user = await tx.user.create({ data: { email: normalized, passwordHash } });
          await tx.projectMembership.create({
            data: { projectId: caller.projectId, userId: user.id, admin },
          });
        }
        await recordAudit(sqlOf(tx), caller.projectId, {
          action: 'member.create',
          actor: actorOf(caller),
          target: { type: 'user', id: user.id },
          detail: { email: normalized, role: admin ? 'admin' : 'member' },
        });
        return user;
      });
    try {
      return await create();
    } catch (err) {
      // Two concurrent creations of one address: the loser's address now has an account, so it invites.
      if ((err as { code?: unknown }).code !== 'P2002') throw err;
      return create();
    }
  }

  /** inviteUser with the admin's and the project's call budget (shared with createUser). */
  async inviteUser(caller: Caller, email: string, admin: boolean): Promise<Invitation> {
    if (!caller.admin) throw forbidden('Only a project admin can invite users');
    if (!normalizeEmail(email)) throw badRequest('email is not a valid address', ['email']);
    this.take(caller);
    return inviteUser(this.db, caller, email, admin);
  }

  private take(caller: Caller): void {
    this.budget.take(caller.userId ?? caller.clientId ?? caller.loginId, caller.projectId);
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
