// OAuth2 scopes of a session: what a sign-in asked for, normalised, and what offline_access changes.
import type { Config } from '../config.js';

/** The scope a Login stores: the requested words, once each, in order; `openid` when none were asked for. */
export function normalizeScope(scope: string | undefined): string {
  const parts = (scope ?? 'openid').split(/\s+/).filter(Boolean);
  return [...new Set(parts.length ? parts : ['openid'])].join(' ');
}

/** True when a session's scope asks for refresh tokens (and the longer refresh lifetime). */
export function hasOfflineAccess(scope: string): boolean {
  return scope.split(' ').includes('offline_access');
}

/** How long a new session lives: the refresh token lifetime with offline_access, else the session lifetime. */
export function sessionLifetimeMs(config: Config, scope: string): number {
  return (hasOfflineAccess(scope) ? config.refreshTokenLifetimeSec : config.sessionLifetimeSec) * 1000;
}
