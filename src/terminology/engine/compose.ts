// Evaluates a ValueSet's compose (FHIR R4 rules) into a Membership: includes are ORed in document order (the
// includes of one code system in several versions latest first), within one include the system part (whole system
// / concept list / filters, all ANDed) and each imported valueSet are intersected, excludes are subtracted,
// duplicates kept once (same system, version and code; same system and code with `versionsMatch`).
import { FLAG_INACTIVE, type CodeSystemIndex } from './code-system-index.js';
import { CodeSystemIndexBuilder } from './index-builder.js';
import { TerminologyError, invalid, withTxIssueType } from './errors.js';
import { evaluateFilter } from './compose-filters.js';
import { checkComposeShape } from './compose-shape.js';
import {
  EntrySet,
  FLAG_SHOW_VERSION,
  Membership,
  makeOverride,
  NEST_BRANCH,
  NEST_WHOLE_SYSTEM,
  type Dependency,
  type EntryOverride,
} from './membership.js';
import { compareVersionsDesc, resolveCodeSystem, versionMatches } from './versions.js';
import type { ConceptInput, ValueSetContains, ValueSetInclude, ValueSetResource } from './types.js';
import type { ComposeContext } from './compose-context.js';

/** `nest`: how the entry may keep its code system hierarchy in the expansion (NEST_* in membership.ts);
 * `flags`: entry flags to add (FLAG_SHOW_VERSION of an imported entry). */
type Emit = (
  src: CodeSystemIndex,
  ord: number,
  override?: EntryOverride,
  nest?: number,
  flags?: number,
) => void;

/** Identity of a value set for caches: id/versionId when known and trusted (a stored value set; never for one a
 * client sent inline, whose id and versionId say nothing about its compose), else its compose, else the object. */
export function valueSetIdentity(vs: ValueSetResource, trustId = true): string {
  if (trustId && vs.id && vs.meta?.versionId)
    return `vs:${vs.id}/${vs.meta.versionId}|${vs.url ?? ''}|${vs.version ?? ''}`;
  if (vs.compose) return 'vs-json:' + JSON.stringify([vs.url, vs.version, vs.compose, vs.contained]);
  let n = objectIds.get(vs);
  if (n === undefined) objectIds.set(vs, (n = ++objectCounter));
  return `vs-obj:${n}`;
}
const objectIds = new WeakMap<object, number>();
let objectCounter = 0;

export async function evaluateValueSet(vs: ValueSetResource, ctx: ComposeContext): Promise<Membership> {
  const m = new Membership();
  const deps = new Map<string, Dependency>();
  const usedVs = new Set<string>();
  const versionParams = new Set<string>();
  const includedSystems = new Set<string>();
  const dep = (d: Dependency): void => {
    deps.set(`${d.kind}|${d.url}|${d.version ?? ''}`, d);
  };

  if (!vs.compose) {
    if (vs.expansion) fromContains(m, vs.expansion.contains ?? []);
    m.seal();
    return m;
  }

  const compose: unknown = vs.compose;
  // Counted first: it reads array lengths only, so an oversized compose is refused before any walk of it.
  chargeClauses(compose, ctx);
  checkComposeShape(compose);
  const includes = sortIncludes(compose.include ?? []);
  const excludes = compose.exclude ?? [];
  // One code system named in several versions: every entry shows its version (the IG's expansions do).
  const showVersion = namesSeveralVersions([...includes, ...excludes]) ? FLAG_SHOW_VERSION : 0;
  // Includes and excludes of one code system in distinct versions: an exclusion removes the code from every
  // version (the exclusion is a diff of versions), as if versionsMatch were asked for.
  if (ctx.versionsMatch === undefined && versionDiff(includes, excludes)) m.versionsMatched = true;
  m.mergeVersions = ctx.versionsMatch === true || m.versionsMatched;
  const ev = new Evaluator(ctx, dep, usedVs, versionParams, includedSystems, m);
  // Excludes first: concepts to subtract (and whole code systems, by url or url|version).
  const excluded = new EntrySet();
  excluded.mergeVersions = m.mergeVersions;
  const excludedSystems = new Set<string>();
  for (const [i, exc] of excludes.entries()) {
    const path = `ValueSet.compose.exclude[${i}]`;
    if (
      exc.system &&
      !exc.concept?.length &&
      !exc.filter?.length &&
      !exc.valueSet?.length &&
      !m.mergeVersions
    ) {
      const src = await ev.codeSystemOf(exc, path, true);
      excludedSystems.add(
        exc.version !== undefined && showVersion ? `${src.url}|${src.version ?? ''}` : src.url,
      );
      continue;
    }
    await ev.include(exc, path, true, (src, ord) => excluded.add(src, ord));
  }
  const dropInactive = compose.inactive === false;
  for (const [i, inc] of includes.entries()) {
    await ev.include(inc, `ValueSet.compose.include[${i}]`, false, (src, ord, ov, nest, flags = 0) => {
      if (dropInactive && (src.flags[ord] & FLAG_INACTIVE) !== 0) return;
      if (
        excludedSystems.size > 0 &&
        (excludedSystems.has(src.url) || excludedSystems.has(`${src.url}|${src.version ?? ''}`))
      )
        return;
      if (excluded.size > 0 && excluded.hasVersion(src, ord)) return;
      if (m.add(src, ord, ov, flags | showVersion)) {
        if (nest) m.markNest(m.size - 1, nest);
      } else {
        m.flat = true; // reached twice: a hierarchy would show it twice
      }
    });
  }
  m.seal();
  m.deps = [...deps.values()];
  m.usedValueSets = [...usedVs];
  m.versionParams = [...versionParams];
  m.includedSystems = [...includedSystems];
  return m;
}

/** Counts a compose's clauses against the expansion's limit before any is evaluated: each costs a code system
 * lookup and a pass over it (50,000 is-a includes held the event loop 3.4 s). */
function chargeClauses(compose: unknown, ctx: ComposeContext): void {
  const budget = ctx.composeClauses;
  if (!budget) return;
  budget.used += countComposeClauses(compose, budget.max - budget.used + 1);
  if (budget.used > budget.max) throw tooManyClauses(budget.max);
}

/** Compose clauses (include and exclude entries, their filter and valueSet entries) of a compose of any shape,
 * counted from array lengths alone and given up once past `stopAfter`: its cost is bounded by the limit, not by
 * the size of what a client sent. */
export function countComposeClauses(compose: unknown, stopAfter: number): number {
  if (typeof compose !== 'object' || compose === null) return 0;
  const c = compose as { include?: unknown; exclude?: unknown };
  let n = 0;
  for (const list of [c.include, c.exclude]) {
    if (!Array.isArray(list)) continue;
    n += list.length;
    for (let i = 0; i < list.length && n <= stopAfter; i++) {
      const clause = list[i] as { filter?: unknown; valueSet?: unknown } | null;
      if (typeof clause !== 'object' || clause === null) continue;
      if (Array.isArray(clause.filter)) n += clause.filter.length;
      if (Array.isArray(clause.valueSet)) n += clause.valueSet.length;
    }
    if (n > stopAfter) break;
  }
  return n;
}

/** 422 too-costly: more compose clauses than EXPAND_MAX_COMPOSE_CLAUSES. */
export function tooManyClauses(max: number): TerminologyError {
  return new TerminologyError(
    422,
    'too-costly',
    `The value sets of this expansion have more than ${max} compose clauses (include, exclude, filter ` +
      `and valueSet entries together; EXPAND_MAX_COMPOSE_CLAUSES)`,
    ['ValueSet.compose'],
  );
}

/** The includes in document order, except that the includes of one code system with versions come latest
 * version first (a code in several versions is then taken from the latest when versions are merged). */
function sortIncludes(includes: ValueSetInclude[]): ValueSetInclude[] {
  const out = [...includes];
  return out.sort((a, b) =>
    a.system !== undefined && a.system === b.system && a.version !== undefined && b.version !== undefined
      ? compareVersionsDesc(a.version, b.version)
      : 0,
  );
}

/** Does the compose name a code system in more than one version (no version counting as one)? */
function namesSeveralVersions(sets: ValueSetInclude[]): boolean {
  const seen = new Map<string, string | undefined>();
  for (const s of sets) {
    if (!s.system) continue;
    if (!seen.has(s.system)) seen.set(s.system, s.version);
    else if (seen.get(s.system) !== s.version) return true;
  }
  return false;
}

/** All includes and excludes are of one code system, each with a version, and no exclude names the version of an
 * include: the value set is the difference between versions. */
function versionDiff(includes: ValueSetInclude[], excludes: ValueSetInclude[]): boolean {
  if (includes.length === 0 || excludes.length === 0) return false;
  const system = includes[0].system;
  if (!system) return false;
  const all = [...includes, ...excludes];
  if (!all.every((s) => s.system === system && s.version !== undefined)) return false;
  return !excludes.some((e) => includes.some((i) => i.version === e.version));
}

/** Pre-expanded value set: the nested contains flattened in document order, one synthetic index per system. */
function fromContains(m: Membership, contains: ValueSetContains[]): void {
  const groups = new Map<string, { system: string; version?: string; rows: ConceptInput[] }>();
  const order: Array<[string, string]> = [];
  // Document order (depth first) without recursion: no nesting depth can overflow the stack.
  const stack: Array<{ list: ValueSetContains[]; i: number }> = [{ list: contains, i: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top.i >= top.list.length) {
      stack.pop();
      continue;
    }
    const c = top.list[top.i++];
    if (c.system && c.code !== undefined) {
      const key = `${c.system}|${c.version ?? ''}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { system: c.system, version: c.version, rows: [] }));
      g.rows.push({
        code: c.code,
        display: c.display,
        notSelectable: c.abstract === true,
        inactive: c.inactive === true,
        designations: c.designation,
      });
      order.push([key, c.code]);
    }
    if (c.contains && c.contains.length > 0) stack.push({ list: c.contains, i: 0 });
  }
  const indexes = new Map<string, CodeSystemIndex>();
  for (const [key, g] of groups) {
    indexes.set(
      key,
      CodeSystemIndexBuilder.build({ url: g.system, version: g.version, caseSensitive: true }, g.rows),
    );
  }
  for (const [key, code] of order) {
    const idx = indexes.get(key)!;
    m.add(idx, idx.ordinalOf(code));
  }
}

class Evaluator {
  constructor(
    private readonly ctx: ComposeContext,
    private readonly dep: (d: Dependency) => void,
    private readonly usedVs: Set<string>,
    /** Version parameters that chose a version (`name|system|version`), echoed in the expansion. */
    private readonly versionParams: Set<string>,
    /** `system|version` of the code systems includes used (not excludes). */
    private readonly includedSystems: Set<string>,
    private readonly m: Membership,
  ) {}

  async include(inc: ValueSetInclude, path: string, isExclude: boolean, emit: Emit): Promise<void> {
    const refs = inc.valueSet ?? [];
    if (!inc.system && refs.length === 0) {
      throw invalid(`${path} has neither a system nor a valueSet`, [path]);
    }
    if (!inc.system && (inc.concept?.length || inc.filter?.length)) {
      throw invalid(`${path} has concepts or filters but no system`, [path]);
    }
    // As the HL7 reference server: imports, concept lists and combined filters give a flat list.
    if (refs.length > 0 || inc.concept?.length || (inc.filter?.length ?? 0) > 1) this.m.flat = true;
    const imports: Membership[] = [];
    for (const [j, ref] of refs.entries())
      imports.push(await this.importValueSet(ref, `${path}.valueSet[${j}]`));

    if (inc.system) {
      const sink: Emit =
        imports.length === 0
          ? emit
          : (src, ord, ov, nest, flags) => {
              for (const im of imports) if (!im.has(src, ord)) return;
              emit(src, ord, ov, nest, flags);
            };
      await this.systemPart(inc, inc.system, path, isExclude, sink);
      return;
    }
    const [first, ...rest] = imports;
    for (let pos = 0; pos < first.size; pos++) {
      const src = first.sources[first.entSrc[pos]];
      const ord = first.entOrd[pos];
      let ok = true;
      for (const im of rest) {
        if (!im.has(src, ord)) {
          ok = false;
          break;
        }
      }
      if (ok) emit(src, ord, first.overrides.get(pos), 0, first.entFlags[pos] & FLAG_SHOW_VERSION);
    }
  }

  private async importValueSet(ref: string, path: string): Promise<Membership> {
    if (ref.startsWith('#')) return this.importContained(ref, path);
    const bar = ref.indexOf('|');
    const url = bar >= 0 ? ref.slice(0, bar) : ref;
    let version = bar >= 0 ? ref.slice(bar + 1) || undefined : undefined;
    if (this.ctx.stack.includes(url)) {
      const cycle = [...this.ctx.stack.slice(this.ctx.stack.indexOf(url)), url].join(' -> ');
      throw withTxIssueType(
        'vs-invalid',
        new TerminologyError(400, 'processing', `Cyclic value set import: ${cycle} (at ${path})`),
      );
    }
    const fallback = version === undefined ? this.ctx.defaultValueSetVersion?.get(url) : undefined;
    if (fallback !== undefined) {
      version = fallback;
      this.versionParams.add(`default-valueset-version|${url}|${fallback}`);
    }
    const vs = await this.ctx.resolver.valueSet(url, version);
    if (!vs) {
      const message =
        version === undefined
          ? `Unable to find included value set '${url}'`
          : `Unable to find included value set '${url}' version '${version}'`;
      throw withTxIssueType('not-found', new TerminologyError(422, 'not-found', `${message} (at ${path})`));
    }
    this.dep({ kind: 'vs', url, version, key: valueSetIdentity(vs) });
    const m = await this.ctx.importMembership(vs, [...this.ctx.stack, url]);
    for (const d of m.deps) this.dep(d);
    this.usedVs.add(vs.version ? `${url}|${vs.version}` : url);
    this.absorb(m);
    return m;
  }

  /** A value set contained in the one being expanded (`#id`): part of its definition, so not a dependency and
   * not reported as used. */
  private async importContained(ref: string, path: string): Promise<Membership> {
    const id = ref.slice(1);
    const vs = (this.ctx.contained ?? []).find(
      (r): r is ValueSetResource =>
        typeof r === 'object' &&
        r !== null &&
        (r as ValueSetResource).resourceType === 'ValueSet' &&
        (r as ValueSetResource).id === id,
    );
    if (!vs) {
      throw withTxIssueType(
        'not-found',
        new TerminologyError(422, 'not-found', `Unable to find contained value set '${ref}' (at ${path})`),
      );
    }
    const key = `#${id}`;
    if (this.ctx.stack.includes(key)) {
      throw withTxIssueType(
        'vs-invalid',
        new TerminologyError(400, 'processing', `Cyclic value set import: ${key} (at ${path})`),
      );
    }
    const inner = this.ctx.withStack([...this.ctx.stack, key]);
    const cache = inner.containedMemberships!;
    let pending = cache.get(id);
    if (!pending) cache.set(id, (pending = evaluateValueSet(vs, inner)));
    const m = await pending;
    for (const d of m.deps) this.dep(d);
    this.absorb(m);
    return m;
  }

  /** What an imported value set used counts as used by this one. */
  private absorb(m: Membership): void {
    for (const u of m.usedValueSets) this.usedVs.add(u);
    for (const p of m.versionParams) this.versionParams.add(p);
    for (const u of m.includedSystems) this.includedSystems.add(u);
    for (const f of m.fragments) if (!this.m.fragments.includes(f)) this.m.fragments.push(f);
  }

  /** The code system of an include: force-system-version over include.version over system-version, then
   * check-system-version (a default when nothing else names a version, else a check); versions may be patterns. */
  private async resolveSystem(url: string, version: string | undefined): Promise<CodeSystemIndex> {
    const forced = this.ctx.forceSystemVersion.get(url);
    const check = this.ctx.checkSystemVersion?.get(url);
    let v = version;
    let via: string | undefined;
    if (forced !== undefined) {
      v = forced;
      via = 'force-system-version';
    } else if (v === undefined && this.ctx.systemVersion.has(url)) {
      v = this.ctx.systemVersion.get(url);
      via = 'system-version';
    } else if (v === undefined && check !== undefined) {
      v = check;
      via = 'check-system-version';
    }
    const idx = await resolveCodeSystem(this.ctx.resolver, url, v);
    if (!idx) throw await this.unknownSystem(url, v);
    if (check !== undefined && via !== 'check-system-version' && !versionMatches(idx.version ?? '', check)) {
      throw withTxIssueType(
        'version-error',
        new TerminologyError(
          400,
          'exception',
          `The version '${idx.version ?? ''}' is not allowed for system '${url}': required to be '${check}' by a ` +
            `version-check parameter`,
        ),
      );
    }
    if (via) this.versionParams.add(`${via}|${url}|${via === 'force-system-version' ? forced : v}`);
    this.dep({ kind: 'cs', url, version: v, key: idx.cacheKey });
    return idx;
  }

  /** The error for a code system (version) that cannot be found, naming the versions there are. */
  private async unknownSystem(url: string, v: string | undefined): Promise<TerminologyError> {
    const versions = v === undefined ? [] : ((await this.ctx.resolver.codeSystemVersions?.(url)) ?? []);
    const known =
      versions.length > 0
        ? ` Valid versions: ${versions.sort(compareVersionsDesc).reverse().join(' or ')}`
        : '';
    const message =
      v === undefined
        ? `A definition for CodeSystem '${url}' could not be found, so the value set cannot be expanded`
        : `A definition for CodeSystem '${url}' version '${v}' could not be found, so the value set cannot be ` +
          `expanded.${known}`;
    // No expression: as in the IG's errors, the message names the code system (the path is not in the request).
    const err = new TerminologyError(422, 'not-found', message);
    err.txIssueType = 'not-found';
    return err;
  }

  /** The code system of an include or exclude, checked for use in an expansion. */
  async codeSystemOf(inc: ValueSetInclude, path: string, isExclude: boolean): Promise<CodeSystemIndex> {
    const src = await this.resolveSystem(inc.system!, inc.version);
    if (src.meta.content === 'supplement') {
      throw withTxIssueType(
        'vs-invalid',
        new TerminologyError(
          422,
          'business-rule',
          `The code system definition for ${src.url} defines a supplement, so this expansion cannot be performed`,
          [path],
        ),
      );
    }
    // An excluded code system was used too (the HL7 reference server lists it).
    const canonical = src.version ? `${src.url}|${src.version}` : src.url;
    this.includedSystems.add(canonical);
    if (!isExclude && src.meta.content === 'fragment' && !this.m.fragments.includes(canonical))
      this.m.fragments.push(canonical);
    return src;
  }

  private async systemPart(
    inc: ValueSetInclude,
    system: string,
    path: string,
    isExclude: boolean,
    emit: Emit,
  ): Promise<void> {
    const src = await this.codeSystemOf({ ...inc, system }, path, isExclude);
    const masks: Uint8Array[] = [];
    for (const [k, f] of (inc.filter ?? []).entries()) {
      const mk = evaluateFilter(src, f, `${path}.filter[${k}]`, this.ctx.regexLimits, this.ctx.regexSpent);
      masks.push(mk instanceof Uint8Array ? mk : await mk);
    }
    const passes = (ord: number): boolean => {
      for (const mk of masks) if (!mk[ord]) return false;
      return true;
    };

    const listed = inc.concept ?? [];
    if (listed.length > 0) {
      // A listed code the code system does not have is left out (as the HL7 reference server does).
      for (const c of listed) {
        const ord = src.ordinalOf(c.code);
        if (ord < 0 || !passes(ord)) continue;
        const ov =
          c.display || c.designation?.length || c.extension?.length
            ? makeOverride(c.display, c.designation, c.extension)
            : undefined;
        emit(src, ord, ov);
      }
      return;
    }

    if (src.meta.content === 'not-present' && !isExclude) {
      throw new TerminologyError(
        422,
        'not-supported',
        `Code system ${src.url} has content 'not-present': its concepts are not available (${path})`,
        [path],
      );
    }
    const n = src.size;
    if (masks.length === 0) {
      // A concept with several parents would appear under each: such a code system expands flat.
      if (!isExclude && hasPolyhierarchy(src)) this.m.flat = true;
      for (let ord = 0; ord < n; ord++) emit(src, ord, undefined, NEST_WHOLE_SYSTEM);
    } else {
      // A subsumption filter (is-a, descendent-of) selects a branch: its hierarchy may be kept.
      const nest = (inc.filter ?? []).every((f) => f.op === 'is-a' || f.op === 'descendent-of')
        ? NEST_BRANCH
        : 0;
      for (let ord = 0; ord < n; ord++) if (passes(ord)) emit(src, ord, undefined, nest);
    }
  }
}

const polyhierarchy = new WeakMap<CodeSystemIndex, boolean>();
/** Does some concept of the code system have more than one parent? (Cached per index.) */
function hasPolyhierarchy(src: CodeSystemIndex): boolean {
  let v = polyhierarchy.get(src);
  if (v === undefined) {
    v = false;
    for (let ord = 0; ord < src.size && !v; ord++) if (src.parentsOf(ord).length > 1) v = true;
    polyhierarchy.set(src, v);
  }
  return v;
}
