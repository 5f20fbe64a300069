// $expand: five stages around one plan.
//   prepare     (expand-prepare.ts)  the request, as the value set completes it, read into the plan
//   membership  (membership-cache.ts, compose.ts)  the value set's entries: its compose evaluated, cached per value
//               set identity and version parameters, re-validated when the resolver's answers may have changed
//   select      (expand-select.ts, ranking.ts)  the entries the filter and the flags keep, ranked
//   page        (expand-page.ts)  offset..end of them, and the details their entries show
//   describe    (expand-describe.ts)  the ValueSet with its expansion
// The request's values are checked before all of them (request-check.ts), once.
import type { CodeSystemIndex } from './code-system-index.js';
import { EngineComposeContext } from './compose-context.js';
import { countComposeClauses, tooManyClauses, valueSetIdentity } from './compose.js';
import { describe, importedValueSets } from './expand-describe.js';
import { detailsWanted, loadDetails, pageOf } from './expand-page.js';
import { prepare, type ExpansionPlan } from './expand-prepare.js';
import { select } from './expand-select.js';
import { Membership } from './membership.js';
import { MembershipCache } from './membership-cache.js';
import { checkRequest, type CheckedRequest } from './request-check.js';
import type { Resolver } from './resolver.js';
import { DEFAULT_REGEX_LIMITS } from './safe-regex.js';
import { resolveSupplements, type SupplementSet } from './supplements.js';
import {
  DEFAULT_EXPAND_LIMITS,
  type ExpandLimits,
  type ExpandRequest,
  type ValueSetResource,
  type ValueSetResourceWithExpansion,
} from './types.js';

export interface ExpansionEngineOptions {
  /** How many value set memberships to keep (LRU). Default 256. */
  maxCachedValueSets?: number;
}

/** Expands value sets, keeping the memberships it evaluated for the next expansions. */
export class ExpansionEngine {
  private readonly memberships: MembershipCache;

  constructor(opts: ExpansionEngineOptions = {}) {
    this.memberships = new MembershipCache(opts.maxCachedValueSets ?? 256);
  }

  /** Drops every cached membership (e.g. on a database reset notification). */
  clear(): void {
    this.memberships.clear();
  }

  /** Drops the cached memberships drawn from an index (it is being released). */
  dropSource(index: CodeSystemIndex): void {
    this.memberships.dropSource(index);
  }

  /** Approximate bytes held by cached memberships (settled ones). */
  memoryEstimateBytes(): Promise<number> {
    return this.memberships.memoryEstimateBytes();
  }

  /** Expands a value set for a request, checking the request's values first (checkRequest). */
  async expand(
    vs: ValueSetResource,
    request: ExpandRequest,
    resolver: Resolver,
    limits: ExpandLimits,
    opts: { inline?: boolean } = {},
  ): Promise<ValueSetResourceWithExpansion> {
    return this.expandChecked(vs, checkRequest(request, limits), resolver, limits, opts);
  }

  /** Expands a value set for a request already checked (with the same limits): its values are not checked again.
   * `inline`: the value set came with the request (cached by its compose, never by its id). */
  async expandChecked(
    vs: ValueSetResource,
    request: CheckedRequest,
    resolver: Resolver,
    limits: ExpandLimits,
    opts: { inline?: boolean } = {},
  ): Promise<ValueSetResourceWithExpansion> {
    // prepare
    const plan = prepare(vs, request, limits, opts.inline === true);
    if (plan.supplementCanonicals.length > 0)
      plan.settings.supplements = await resolveSupplements(plan.supplementCanonicals, resolver);
    // membership
    const found = this.membershipOf(plan, resolver);
    const m = found instanceof Membership ? found : await found;
    plan.settings.supplements.settle(m.usedCodeSystems());
    // select
    const selection = select(plan, m);
    // page
    const page = pageOf(plan, selection);
    const wanted = resolver.conceptDetails ? detailsWanted(m, page, resolver, plan.settings) : undefined;
    if (wanted) plan.settings.loaded = await loadDetails(wanted, resolver);
    // describe
    const imported = m.usedValueSets.length > 0 ? await importedValueSets(m, resolver) : NO_VALUE_SETS;
    return describe(plan, m, page, imported);
  }

  /** The value set's membership as an expansion with this request would use it (its version parameters and
   * supplements), cached as expansions cache it: $validate-code asks it for a position, never for an expansion.
   * Returns it with the supplements asked for (resolved, and settled against the membership). */
  async membershipFor(
    vs: ValueSetResource,
    request: CheckedRequest,
    resolver: Resolver,
    limits: ExpandLimits,
    opts: { inline?: boolean } = {},
  ): Promise<{ membership: Membership; supplements: SupplementSet }> {
    const plan = prepare(vs, request, limits, opts.inline === true);
    if (plan.supplementCanonicals.length > 0)
      plan.settings.supplements = await resolveSupplements(plan.supplementCanonicals, resolver);
    const found = this.membershipOf(plan, resolver);
    const m = found instanceof Membership ? found : await found;
    plan.settings.supplements.settle(m.usedCodeSystems());
    return { membership: m, supplements: plan.settings.supplements };
  }

  /** The membership stage: the value set's (cached, re-validated) membership, evaluated in a compose context of
   * this expansion. Synchronous when the cached one is known current: a hot value set costs no promise. */
  private membershipOf(plan: ExpansionPlan, resolver: Resolver): Membership | Promise<Membership> {
    const { vs, req, limits } = plan;
    const ctx = new EngineComposeContext(
      this.memberships,
      resolver,
      plan.systemVersion,
      plan.forceSystemVersion,
      plan.versionKey,
      [vs.url ?? '#'],
    );
    ctx.regexLimits = limits.regex ?? DEFAULT_REGEX_LIMITS;
    ctx.regexSpent = { ms: 0 };
    ctx.composeClauses = {
      used: 0,
      max: limits.maxComposeClauses ?? DEFAULT_EXPAND_LIMITS.maxComposeClauses,
    };
    if (plan.checkSystemVersion.size > 0) ctx.checkSystemVersion = plan.checkSystemVersion;
    if (plan.defaultValueSetVersion.size > 0) ctx.defaultValueSetVersion = plan.defaultValueSetVersion;
    if (req.versionsMatch !== undefined) ctx.versionsMatch = req.versionsMatch;
    if (vs.contained) ctx.contained = vs.contained;
    // Before the identity, which serialises an inline compose: an oversized one is refused from its lengths.
    if (countComposeClauses(vs.compose, ctx.composeClauses.max) > ctx.composeClauses.max)
      throw tooManyClauses(ctx.composeClauses.max);
    return this.memberships.membership(vs, ctx, plan.versionKey, valueSetIdentity(vs, !plan.inline));
  }
}

/** Shared by expansions that import no value set; never written to. */
const NO_VALUE_SETS: readonly ValueSetResource[] = [];

/** The process-wide engine. */
export const defaultEngine = new ExpansionEngine();

/** Expands a value set with the process-wide engine (see ExpansionEngine.expand). */
export function expandValueSet(
  vs: ValueSetResource,
  req: ExpandRequest,
  resolver: Resolver,
  limits: ExpandLimits,
): Promise<ValueSetResourceWithExpansion> {
  return defaultEngine.expand(vs, req, resolver, limits);
}
