// What a new password must be, in the spirit of NIST SP 800-63B (5.1.1.2): long enough, not too long to hash, not one
// of the passwords attackers try first, not the account's own address; and no composition rules (no "one digit and
// one symbol"), no expiry. The common passwords are zxcvbn-ts's list (49,233 of them, MIT), loaded the first time a
// password is set: a server that never sets one does not hold it.
import { badRequest } from '../core/errors.js';

/** The most characters a password may have (scrypt hashes any length; this bounds the work a request asks for). */
export const MAX_PASSWORD_CHARS = 1024;

/** The shortest password NIST SP 800-63B accepts at all (its revision 4 asks 15 where a password is the only factor:
 * an operator raises PASSWORD_MIN_LENGTH for that). */
export const DEFAULT_MIN_PASSWORD_LENGTH = 8;

let common: Promise<Set<string>> | undefined;

/** The common-passwords list, lowercased, loaded once. */
function commonPasswords(): Promise<Set<string>> {
  common ??= import('@zxcvbn-ts/language-common').then(
    (m) => new Set(m.dictionary['passwords-common'].map((p) => p.toLowerCase())),
  );
  return common;
}

/** Why `password` may not be set, or undefined when it may; `email` is the account's address. The message never
 * repeats the password. */
export async function passwordProblem(
  password: string,
  minLength: number,
  email?: string,
): Promise<string | undefined> {
  // Characters as people count them (code points), not UTF-16 units: an emoji is one.
  const length = [...password].length;
  if (length < minLength) return `must be at least ${minLength} characters`;
  if (password.length > MAX_PASSWORD_CHARS) return `must be at most ${MAX_PASSWORD_CHARS} characters`;
  const lower = password.toLowerCase();
  if (new Set(password).size === 1) return 'must not be one character repeated';
  if (email) {
    const address = email.toLowerCase();
    if (lower === address || lower === address.slice(0, address.indexOf('@')))
      return 'must not be the account\u2019s email address';
  }
  if ((await commonPasswords()).has(lower))
    return 'is one of the most common passwords, which attackers try first; choose another';
  return undefined;
}

/** 400 naming `field` when `password` does not meet the policy (see passwordProblem). */
export async function checkNewPassword(
  password: unknown,
  field: string,
  minLength: number,
  email?: string,
): Promise<string> {
  if (typeof password !== 'string' || password === '') throw badRequest(`${field} is required`, [field]);
  const problem = await passwordProblem(password, minLength, email);
  if (problem) throw badRequest(`${field} ${problem}`, [field]);
  return password;
}
