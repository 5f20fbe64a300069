// Email address checks in linear time: a regular expression with nested quantifiers over the same characters
// (the previous /^[^\s@]+@[^\s@]+\.[^\s@]+$/) backtracks quadratically on "a@" + many dots.

/** The longest address accepted (RFC 5321 4.5.3.1.3 limits a path to 256 octets including the brackets). */
export const MAX_EMAIL_LENGTH = 254;

/** Lower-cased, trimmed email when it looks like local@domain.tld, else undefined. One pass, no backtracking. */
export function normalizeEmail(input: string): string | undefined {
  const email = input.trim().toLowerCase();
  if (email.length === 0 || email.length > MAX_EMAIL_LENGTH) return undefined;
  const at = email.indexOf('@');
  if (at <= 0 || at !== email.lastIndexOf('@')) return undefined;
  const domain = email.slice(at + 1);
  const dot = domain.lastIndexOf('.');
  // A dot inside the domain, with text on both sides.
  if (dot <= 0 || dot === domain.length - 1) return undefined;
  for (let i = 0; i < email.length; i++) {
    const c = email.charCodeAt(i);
    // No whitespace or control characters (NUL included).
    if (c <= 0x20 || c === 0x7f || c === 0x85 || c === 0xa0 || c === 0x2028 || c === 0x2029) return undefined;
  }
  return email;
}
