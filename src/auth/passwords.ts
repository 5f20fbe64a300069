// Password hashing with scrypt (memory-hard, in Node's crypto): format scrypt$N$r$p$salt$hash (base64url).
// Default N = 2^15, r = 8, p = 3 (PASSWORD_HASH_COST, PASSWORD_HASH_PARALLELISM): one of the settings OWASP's
// Password Storage Cheat Sheet lists as equivalent to its scrypt minimum (N=2^17, r=8, p=1). 32 MiB per hash instead
// of 128: each hash holds its memory while it runs, and a server that signs several people in at once must not
// need hundreds of megabytes for it (docs/performance.md, Start and memory). Concurrent hashes are bounded, and the
// queue behind them too.
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import { ApiError } from '../core/errors.js';
import type { Config } from '../config.js';
import { checkNewPassword, DEFAULT_MIN_PASSWORD_LENGTH } from './password-policy.js';

const scrypt = promisify(crypto.scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: crypto.ScryptOptions,
) => Promise<Buffer>;

const R = 8;
const KEYLEN = 32;

/** The production cost (log2 N); tests may lower it through PASSWORD_HASH_COST, never below MIN_COST. */
export const DEFAULT_HASH_COST = 15;
/** The production parallelism (scrypt's p) that goes with DEFAULT_HASH_COST. */
export const DEFAULT_HASH_PARALLELISM = 3;
/** Lowest cost accepted from the configuration. */
export const MIN_HASH_COST = 10;

/** Settings of the hasher. */
export interface HasherOptions {
  /** log2 of scrypt's N. */
  cost: number;
  /** scrypt's p (default DEFAULT_HASH_PARALLELISM). */
  parallelism?: number;
  /** Hashes running at once (each holds 128 * N * r bytes). */
  concurrency: number;
  /** Hashes allowed to wait; beyond this a sign-in is refused with 503 (the server is protecting its memory). */
  maxQueue: number;
  /** The shortest new password (password-policy.ts; default DEFAULT_MIN_PASSWORD_LENGTH). */
  minLength?: number;
}

/** Hashes and verifies passwords at a configured cost, a bounded number at a time. */
export class PasswordHasher {
  private running = 0;
  private waiting: Array<() => void> = [];
  private readonly n: number;
  private readonly p: number;
  /** A hash at the current cost to check against when the user does not exist, so timing reveals nothing. */
  readonly dummyHash: string;

  constructor(private readonly opts: HasherOptions) {
    this.n = 2 ** opts.cost;
    this.p = opts.parallelism ?? DEFAULT_HASH_PARALLELISM;
    this.dummyHash = ['scrypt', this.n, R, this.p, 'A'.repeat(22), 'A'.repeat(43)].join('$');
  }

  /** Hashes a password for storage. */
  async hash(password: string): Promise<string> {
    const salt = crypto.randomBytes(16);
    const hash = await this.run(password, salt, KEYLEN, this.n, R, this.p);
    return ['scrypt', this.n, R, this.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
  }

  /** Checks a new password against the policy: a 400 naming `field` when it fails (password-policy.ts). `email`:
   * the account's address, which the password may not be. */
  checkNew(password: unknown, field: string, email?: string): Promise<string> {
    return checkNewPassword(password, field, this.opts.minLength ?? DEFAULT_MIN_PASSWORD_LENGTH, email);
  }

  /** checkNew, then hash. */
  async hashNew(password: unknown, field: string, email?: string): Promise<string> {
    return this.hash(await this.checkNew(password, field, email));
  }

  /** Checks a password against a stored hash in constant time; `rehash` when the hash was made with other
   * parameters than the current ones (an older default, or a changed setting). */
  async verify(password: string, stored: string): Promise<{ ok: boolean; rehash: boolean }> {
    const parts = stored.split('$');
    if (parts.length !== 6 || parts[0] !== 'scrypt') return { ok: false, rehash: false };
    const [, n, r, p, saltB64, hashB64] = parts;
    const expected = Buffer.from(hashB64, 'base64url');
    const actual = await this.run(
      password,
      Buffer.from(saltB64, 'base64url'),
      expected.length,
      Number(n),
      Number(r),
      Number(p),
    );
    const ok = actual.length === expected.length && crypto.timingSafeEqual(actual, expected);
    return { ok, rehash: ok && (Number(n) !== this.n || Number(r) !== R || Number(p) !== this.p) };
  }

  private async run(password: string, salt: Buffer, keylen: number, n: number, r: number, p: number) {
    await this.acquire();
    try {
      // Node refuses a run needing more than maxmem (128 * N * r bytes, plus a little; p lanes run one after
      // another in the same memory): allow twice that.
      return await scrypt(password, salt, keylen, { N: n, r, p, maxmem: 256 * n * r });
    } finally {
      this.release();
    }
  }

  private async acquire(): Promise<void> {
    if (this.running < this.opts.concurrency) {
      this.running++;
      return;
    }
    if (this.waiting.length >= this.opts.maxQueue) {
      throw new ApiError(503, 'throttled', 'Too many sign-ins in progress; retry shortly');
    }
    // The slot is handed over by release(): running stays counted.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}

/** SHA-256 hex of a secret (client secrets, codes, refresh secrets: high-entropy, so no slow hash needed). */
export function sha256(value: string): string {
  return crypto.createHash('sha256').update(value).digest('hex');
}

/** Constant-time comparison of two hex/ASCII strings. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && crypto.timingSafeEqual(ab, bb);
}

/** A fresh random secret (authorization codes, refresh secrets). */
export function randomSecret(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** The password hasher for a configuration (cost, concurrency, and a queue of 32 waiting hashes per slot). */
export function passwordHasher(config: Config): PasswordHasher {
  return new PasswordHasher({
    cost: config.passwordHashCost,
    parallelism: config.passwordHashParallelism,
    concurrency: config.passwordHashConcurrency,
    maxQueue: 32 * config.passwordHashConcurrency,
    minLength: config.passwordMinLength,
  });
}
