// Authentication of requests: an access token names a Login, whose cached state says whether it may be used now.
// The common case (token and session both cached) is synchronous and costs no database round trip; lastUsed is
// recorded in batches for the same reason.
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import type { Principal } from '../core/caller.js';
import { unauthorized } from '../core/errors.js';
import { isActive, type SessionCache } from './session-cache.js';
import type { TokenService } from './tokens.js';

/** How often the lastUsed times of the sessions used meanwhile are written. */
const FLUSH_MS = 15_000;

/** Resolves bearer tokens to the principal of their session. */
export class RequestAuthenticator {
  private touched = new Set<string>();
  private flushTimer: NodeJS.Timeout;

  constructor(
    private readonly db: Database,
    private readonly tokens: TokenService,
    private readonly sessions: SessionCache,
    private readonly logger: Logger,
  ) {
    // lastUsed is written in batches: a write per request would cost a round trip per request.
    this.flushTimer = setInterval(() => void this.flushLastUsed(), FLUSH_MS);
    this.flushTimer.unref();
  }

  /** The principal of a token whose claims and session are both cached and active; undefined otherwise (then
   * call authenticate, which also answers the errors). Synchronous: the common case costs no promise. */
  authenticateCached(token: string): Principal | undefined {
    const claims = this.tokens.verifiedCached(token);
    if (!claims || claims.token_use !== 'access') return undefined;
    const state = this.sessions.cached(claims.login_id);
    if (!state || !isActive(state)) return undefined;
    this.touched.add(state.loginId);
    return state;
  }

  /** Resolves a bearer token to its principal; throws 401 when the token or its Login is not valid now. */
  async authenticate(token: string): Promise<Principal> {
    const claims = await this.tokens.verify(token);
    if (!claims || claims.token_use !== 'access') throw unauthorized('Invalid or expired access token');
    const state = await this.sessions.get(claims.login_id);
    if (!state || !isActive(state)) throw unauthorized('Session has ended (revoked or expired)');
    this.touched.add(state.loginId);
    return state;
  }

  /** Writes the pending lastUsed times. */
  async flushLastUsed(): Promise<void> {
    if (this.touched.size === 0) return;
    const ids = [...this.touched];
    this.touched.clear();
    try {
      await this.db.sql(`UPDATE "Login" SET "lastUsed" = now() WHERE id = ANY($1::uuid[])`, [ids]);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'could not record session lastUsed');
    }
  }

  /** Stops the timer and writes what is pending. */
  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flushLastUsed();
  }
}
