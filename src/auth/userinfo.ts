// OpenID Connect UserInfo (OIDC Core 5.3): the claims about the signed-in user that the session's scope allows -
// `sub` always, `email` with the `email` scope, the names with `profile`. Only a user's session with `openid` has
// any; a client application's session has no user to describe.
import type { Caller } from '../core/caller.js';
import type { Database } from '../db/database.js';
import { ApiError } from '../core/errors.js';
import { hasOpenId } from './id-token.js';

/** The claims (OIDC names). */
export interface UserInfo {
  sub: string;
  email?: string;
  name?: string;
  given_name?: string;
  family_name?: string;
}

/** 403 insufficient_scope (RFC 6750 3.1), naming why. */
function insufficient(message: string): ApiError {
  return new ApiError(403, 'forbidden', message, { oauthError: 'insufficient_scope' });
}

/** The caller's user's claims, as far as the session's scope allows. */
export async function userInfo(db: Database, caller: Caller): Promise<UserInfo> {
  if (!caller.userId)
    throw insufficient('UserInfo describes a user; this token belongs to a client application');
  if (!hasOpenId(caller.scope)) throw insufficient('UserInfo needs a token whose scope includes openid');
  const user = await db.prisma.user.findUnique({
    where: { id: caller.userId },
    select: { id: true, email: true, firstName: true, lastName: true },
  });
  if (!user) throw new ApiError(401, 'login', 'The account of this session no longer exists');
  const scopes = caller.scope.split(' ');
  const info: UserInfo = { sub: user.id };
  if (scopes.includes('profile')) {
    const name = [user.firstName, user.lastName].filter(Boolean).join(' ');
    if (name) info.name = name;
    if (user.firstName) info.given_name = user.firstName;
    if (user.lastName) info.family_name = user.lastName;
  }
  if (scopes.includes('email')) info.email = user.email;
  return info;
}
