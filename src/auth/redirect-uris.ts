// A client application's registered redirect URIs: checked when registered (absolute https, or http for a loopback
// host only; no fragment, no user info, bounded) and later matched exactly, character for character (RFC 9700
// 2.1: no pattern or prefix matching, which is how open redirects and stolen codes happen).
import { badRequest } from '../core/errors.js';

/** Most redirect URIs one client registers. */
export const MAX_REDIRECT_URIS = 10;
/** Longest redirect URI accepted. */
export const MAX_REDIRECT_URI_LENGTH = 2000;

/** Hosts plain http is allowed for (RFC 8252 7.3: a native app's loopback redirect). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whitespace and control characters: never part of a URI (URL() would silently drop some of them). */
// eslint-disable-next-line no-control-regex -- this is the check for them
const UNSAFE_CHARS = /[\s\u0000-\u001f\u007f]/;

/** Why `uri` cannot be registered, or undefined when it can. */
function problem(uri: string): string | undefined {
  if (uri.length === 0) return 'is empty';
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `is longer than ${MAX_REDIRECT_URI_LENGTH} characters`;
  if (UNSAFE_CHARS.test(uri)) return 'contains whitespace or a control character';
  if (uri.includes('#')) return 'has a fragment (#), which a redirect URI must not have (RFC 6749 3.1.2)';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URI';
  }
  if (url.username || url.password) return 'carries user info';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname)
      ? undefined
      : 'uses http for a host that is not loopback (https is required; http only for localhost, 127.0.0.1, [::1])';
  }
  return `uses the scheme ${url.protocol} (https, or http for a loopback host)`;
}

/** The redirect URIs to register, checked (400 naming the bad one); duplicates are dropped, order kept. */
export function checkRedirectUris(uris: readonly unknown[]): string[] {
  if (uris.length > MAX_REDIRECT_URIS)
    throw badRequest(`At most ${MAX_REDIRECT_URIS} redirect URIs per client`, ['redirectUris']);
  const out: string[] = [];
  for (const [i, uri] of uris.entries()) {
    if (typeof uri !== 'string') throw badRequest(`redirectUris[${i}] must be a string`, ['redirectUris']);
    const why = problem(uri);
    if (why) {
      const shown = uri.length > 100 ? `${uri.slice(0, 100)}...` : uri;
      throw badRequest(`redirectUris[${i}] ${why}: ${JSON.stringify(shown)}`, ['redirectUris']);
    }
    if (!out.includes(uri)) out.push(uri);
  }
  return out;
}

/** True when `uri` is exactly one of the registered ones. */
export function isRegistered(uri: string, registered: readonly string[]): boolean {
  return registered.includes(uri);
}
