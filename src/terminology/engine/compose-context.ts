// The context one expansion evaluates its value set's compose in: the resolver, the version parameters, the
// expansion's shared budgets (regex time, compose clauses), and where imported value sets' memberships come from.
import type { Membership } from './membership.js';
import type { Resolver } from './resolver.js';
import { DEFAULT_REGEX_LIMITS, type RegexLimits, type RegexSpent } from './safe-regex.js';
import type { ValueSetResource } from './types.js';

/** What compose evaluation needs of the expansion it runs for. */
export interface ComposeContext {
  resolver: Resolver;
  systemVersion: Map<string, string>;
  forceSystemVersion: Map<string, string>;
  /** `check-system-version`: the version (pattern) a code system must have; the default when an include names
   * none. Optional (none checked). */
  checkSystemVersion?: Map<string, string>;
  /** Canonical urls of the value sets being evaluated, outermost first (cycle detection). */
  stack: string[];
  /** Limits of regex filters (default: DEFAULT_REGEX_LIMITS). */
  regexLimits?: RegexLimits;
  /** Time this expansion has spent on regex filters (shared by the contexts of its imports). */
  regexSpent?: RegexSpent;
  /** Compose clauses this expansion has evaluated, and its limit (shared by the contexts of its imports). */
  composeClauses?: { used: number; max: number };
  /** `versionsMatch` as the request (or the value set) gives it: true merges a code across the versions of its
   * code system, false keeps one entry per version; undefined lets the compose decide (see evaluateValueSet). */
  versionsMatch?: boolean;
  /** `default-valueset-version`: the version of an imported value set referenced without one. */
  defaultValueSetVersion?: Map<string, string>;
  /** The contained resources of the value set being expanded (`#id` imports). */
  contained?: readonly unknown[];
  /** Membership of an imported value set (cached by the engine). */
  importMembership(vs: ValueSetResource, stack: string[]): Promise<Membership>;
  /** The same context with another stack (shares the memberships of contained value sets evaluated so far). */
  withStack(stack: string[]): ComposeContext;
  /** Memberships of the contained value sets evaluated in this expansion, by id (each is evaluated once however
   * often it is imported). */
  containedMemberships?: Map<string, Promise<Membership>>;
}

/** Where a context gets the membership of an imported value set: the engine, which caches memberships. */
export interface MembershipSource {
  membership(vs: ValueSetResource, ctx: ComposeContext, versionKey: string): Membership | Promise<Membership>;
}

/** The compose context of one expansion. A class rather than an object literal with an arrow function: this is
 * built on every request, and closures created per call are costly under tsx (each gets a defineProperty for its
 * name). */
export class EngineComposeContext implements ComposeContext {
  constructor(
    private readonly engine: MembershipSource,
    readonly resolver: Resolver,
    readonly systemVersion: Map<string, string>,
    readonly forceSystemVersion: Map<string, string>,
    private readonly versionKey: string,
    readonly stack: string[],
  ) {}

  regexLimits: RegexLimits = DEFAULT_REGEX_LIMITS;
  regexSpent: RegexSpent = { ms: 0 };
  composeClauses?: { used: number; max: number };
  checkSystemVersion?: Map<string, string>;
  versionsMatch?: boolean;
  defaultValueSetVersion?: Map<string, string>;
  contained?: readonly unknown[];

  /** The memberships of the contained value sets evaluated so far in this expansion (by id). */
  containedMemberships?: Map<string, Promise<Membership>>;

  async importMembership(vs: ValueSetResource, stack: string[]): Promise<Membership> {
    const inner = this.withStack(stack);
    inner.contained = vs.contained;
    inner.containedMemberships = undefined;
    return this.engine.membership(vs, inner, this.versionKey);
  }

  withStack(stack: string[]): EngineComposeContext {
    const inner = new EngineComposeContext(
      this.engine,
      this.resolver,
      this.systemVersion,
      this.forceSystemVersion,
      this.versionKey,
      stack,
    );
    inner.regexLimits = this.regexLimits;
    inner.regexSpent = this.regexSpent;
    inner.composeClauses = this.composeClauses;
    inner.checkSystemVersion = this.checkSystemVersion;
    inner.versionsMatch = this.versionsMatch;
    inner.defaultValueSetVersion = this.defaultValueSetVersion;
    inner.contained = this.contained;
    inner.containedMemberships = this.containedMemberships ??= new Map();
    return inner;
  }
}
