// The membership stage's cache: the evaluated compose of each value set (its Membership), kept per resolver scope,
// value set identity and version parameters, re-validated against the resolver when its generation moves, and
// evicted least recently used beyond a count.
import type { CodeSystemIndex } from './code-system-index.js';
import type { ComposeContext, MembershipSource } from './compose-context.js';
import { evaluateValueSet, valueSetIdentity } from './compose.js';
import type { Membership } from './membership.js';
import type { Resolver } from './resolver.js';
import type { ValueSetResource } from './types.js';
import { resolveCodeSystem } from './versions.js';

/** A cached membership: the evaluation, its result once settled, and when its dependencies were last checked. */
interface CachedMembership {
  promise: Promise<Membership>;
  value?: Membership;
  /** The resolver generation at which the dependencies were last found current. */
  validatedAt?: number;
  /** For LRU eviction (a counter, not a time). */
  lastUse: number;
}

/** The memberships of the value sets an engine expanded (and of those they import). */
export class MembershipCache implements MembershipSource {
  private readonly memberships = new Map<string, CachedMembership>();
  private useCounter = 0;

  /** A cache of at most `maxCached` memberships. */
  constructor(private readonly maxCached: number) {}

  /** Drops every cached membership. */
  clear(): void {
    this.memberships.clear();
  }

  /** Drops the cached memberships drawn from an index (it is being released). */
  dropSource(index: CodeSystemIndex): void {
    for (const [k, c] of this.memberships) if (c.value?.sources.includes(index)) this.memberships.delete(k);
  }

  /** Approximate bytes held by cached memberships (settled ones). */
  async memoryEstimateBytes(): Promise<number> {
    let b = 0;
    for (const c of this.memberships.values())
      b += (await c.promise.catch(() => undefined))?.memoryEstimateBytes() ?? 0;
    return b;
  }

  /** The (cached, re-validated) membership of a value set. Synchronous when the cached one is known current
   * (the resolver's generation has not moved since its dependencies were checked): the common case of a hot
   * value set costs no promise. */
  membership(
    vs: ValueSetResource,
    ctx: ComposeContext,
    versionKey: string,
    identity: string = valueSetIdentity(vs),
  ): Membership | Promise<Membership> {
    // Partitioned by the resolver's scope (the project): what one project's definitions resolve to is never
    // served to another, even for the same shared value set.
    const key = `${ctx.resolver.scope ?? ''}\u0000${identity}\u0000${versionKey}`;
    const cached = this.memberships.get(key);
    if (cached) {
      cached.lastUse = ++this.useCounter;
      const gen = ctx.resolver.generation?.();
      if (cached.value && gen !== undefined && cached.validatedAt === gen) return cached.value;
      return this.revalidate(key, cached, vs, ctx, gen);
    }
    return this.evaluate(key, vs, ctx);
  }

  private async revalidate(
    key: string,
    cached: CachedMembership,
    vs: ValueSetResource,
    ctx: ComposeContext,
    gen: number | undefined,
  ): Promise<Membership> {
    const m = await cached.promise.catch(() => undefined);
    if (m && (await depsValid(m, ctx.resolver))) {
      // Checked against answers of generation `gen` (read before the check): current until it moves.
      cached.validatedAt = gen;
      return m;
    }
    if (this.memberships.get(key) === cached) this.memberships.delete(key);
    return this.evaluate(key, vs, ctx);
  }

  private evaluate(key: string, vs: ValueSetResource, ctx: ComposeContext): Promise<Membership> {
    const gen = ctx.resolver.generation?.();
    const entry: CachedMembership = { promise: evaluateValueSet(vs, ctx), lastUse: ++this.useCounter };
    this.memberships.set(key, entry);
    entry.promise.then(
      (m) => {
        entry.value = m;
        entry.validatedAt = gen;
      },
      () => {
        if (this.memberships.get(key) === entry) this.memberships.delete(key);
      },
    );
    if (this.memberships.size > this.maxCached) this.evictLeastRecentlyUsed();
    return entry.promise;
  }

  /** Drops the least recently used entries beyond the limit (a scan: only when a new value set is evaluated). */
  private evictLeastRecentlyUsed(): void {
    while (this.memberships.size > this.maxCached) {
      let oldestKey: string | undefined;
      let oldest = Infinity;
      for (const [k, c] of this.memberships) {
        if (c.lastUse < oldest) {
          oldest = c.lastUse;
          oldestKey = k;
        }
      }
      if (oldestKey === undefined) return;
      this.memberships.delete(oldestKey);
    }
  }
}

/** True when every code system and value set the membership was drawn from is still the one the resolver gives. */
async function depsValid(m: Membership, resolver: Resolver): Promise<boolean> {
  for (const d of m.deps) {
    if (d.kind === 'cs') {
      const cur = await resolveCodeSystem(resolver, d.url, d.version);
      if (!cur || cur.cacheKey !== d.key) return false;
    } else {
      const cur = await resolver.valueSet(d.url, d.version);
      if (!cur || valueSetIdentity(cur) !== d.key) return false;
    }
  }
  return true;
}
