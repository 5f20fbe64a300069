// Failure throttling for password and client-secret checks (OWASP ASVS V2.2.1): counts failures per key in a fixed
// window; a key at its limit is refused (429 + Retry-After) until its window ends. Nothing is permanent: the window
// ending, or a success for that key, clears it. In memory, per instance (docs/sessions-and-security.md, Brute force).
import { ApiError } from '../core/errors.js';

/** 429 with the seconds after which a retry may succeed (the REST layer sends them as Retry-After). */
export class TooManyAttempts extends ApiError {
  constructor(
    message: string,
    public readonly retryAfterSec: number,
  ) {
    // GraphQL Yoga sends extensions.http.headers (from `headers`) as response headers; REST sets Retry-After itself.
    super(429, 'throttled', `${message}; retry after ${retryAfterSec} s`, {
      oauthError: 'temporarily_unavailable',
      headers: { 'Retry-After': String(retryAfterSec) },
    });
  }
}

interface Counter {
  failures: number;
  resetAt: number;
}

/** Upper bound on keys kept, so spraying many accounts or addresses cannot grow memory without limit. */
const MAX_KEYS = 100_000;

/** Failure counters with a limit per key. */
export class FailureThrottle {
  private counters = new Map<string, Counter>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Seconds until the key may try again, or 0 when it may try now. */
  blockedFor(key: string, now = Date.now()): number {
    const c = this.counters.get(key);
    if (!c) return 0;
    if (c.resetAt <= now) {
      this.counters.delete(key);
      return 0;
    }
    return c.failures >= this.limit ? Math.max(1, Math.ceil((c.resetAt - now) / 1000)) : 0;
  }

  /** Records a failure for the key. */
  fail(key: string, now = Date.now()): void {
    const c = this.counters.get(key);
    if (c && c.resetAt > now) {
      c.failures++;
      return;
    }
    if (this.counters.size >= MAX_KEYS) {
      // Drop the oldest entry (Map keeps insertion order): under a spray, old keys are the least useful.
      const first = this.counters.keys().next().value;
      if (first !== undefined) this.counters.delete(first);
    }
    this.counters.set(key, { failures: 1, resetAt: now + this.windowMs });
  }

  /** Forgets the key (after a success). */
  clear(key: string): void {
    this.counters.delete(key);
  }
}

/** Limits of one throttled check: per subject and address, per address, per subject. */
export interface ThrottleLimits {
  perSubjectAndAddress: number;
  perAddress: number;
  perSubject: number;
  windowSec: number;
}

/** Throttles a check (sign-in per account, or client authentication per client) three ways: the pair (one attacker
 * guessing one account), the address (one attacker spraying many accounts) and the subject (many addresses on one
 * account; set higher, so that one attacker cannot lock the holder out, and it too ends with its window). */
export class CheckThrottle {
  private pair: FailureThrottle;
  private address: FailureThrottle;
  private subject: FailureThrottle;

  constructor(
    private readonly what: string,
    limits: ThrottleLimits,
  ) {
    const ms = limits.windowSec * 1000;
    this.pair = new FailureThrottle(limits.perSubjectAndAddress, ms);
    this.address = new FailureThrottle(limits.perAddress, ms);
    this.subject = new FailureThrottle(limits.perSubject, ms);
  }

  /** Throws TooManyAttempts when any of the three is at its limit (before the expensive check runs). */
  check(subject: string, address: string | undefined): void {
    const a = address ?? 'unknown';
    const wait = Math.max(
      this.pair.blockedFor(`${subject}\n${a}`),
      this.address.blockedFor(a),
      this.subject.blockedFor(subject),
    );
    if (wait > 0) throw new TooManyAttempts(`Too many failed ${this.what} attempts`, wait);
  }

  /** Counts a failed check. */
  fail(subject: string, address: string | undefined): void {
    const a = address ?? 'unknown';
    this.pair.fail(`${subject}\n${a}`);
    this.address.fail(a);
    this.subject.fail(subject);
  }

  /** A success clears the pair (the holder's own address), not the subject's or address's totals. */
  succeed(subject: string, address: string | undefined): void {
    this.pair.clear(`${subject}\n${address ?? 'unknown'}`);
  }
}

/** Limits of a budget of calls (not failures) per window: per acting admin and per project. */
export interface CallBudgetLimits {
  perAdmin: number;
  perProject: number;
  windowSec: number;
}

/** Counts every call per admin and per project in a fixed window (createUser, inviteUser): each call can write
 * an account or an invitation and costs a password hash, so one admin cannot spray addresses or flood inboxes. */
export class CallBudget {
  private admin: FailureThrottle;
  private project: FailureThrottle;

  constructor(
    private readonly what: string,
    private readonly limits: CallBudgetLimits,
  ) {
    this.admin = new FailureThrottle(limits.perAdmin, limits.windowSec * 1000);
    this.project = new FailureThrottle(limits.perProject, limits.windowSec * 1000);
  }

  /** Takes one call from both budgets, or throws TooManyAttempts naming the spent one (nothing is taken then). */
  take(adminKey: string, projectId: string): void {
    const a = this.admin.blockedFor(adminKey);
    if (a > 0)
      throw new TooManyAttempts(
        `Too many ${this.what} calls (ACCOUNT_INVITES_PER_ADMIN=${this.limits.perAdmin})`,
        a,
      );
    const p = this.project.blockedFor(projectId);
    if (p > 0)
      throw new TooManyAttempts(
        `Too many ${this.what} calls (ACCOUNT_INVITES_PER_PROJECT=${this.limits.perProject})`,
        p,
      );
    this.admin.fail(adminKey);
    this.project.fail(projectId);
  }
}
