// The member list of a value set (its compose evaluated): an ordered array of (source index, ordinal) entries,
// with per-source position maps for O(1) membership tests, and caches of filtered/ranked position lists.
import type { CodeSystemIndex } from './code-system-index.js';
import { tokenize } from './normalize.js';
import type { Designation, Extension } from './types.js';

/** Display / designations / extensions a value set's `compose.include.concept` gives a member. */
export interface EntryOverride {
  display?: string;
  designations?: Designation[];
  extension?: Extension[];
  /** Normalised words of the display and designation values (for `filter`). */
  words: string[];
  /** Normalised display words joined by single spaces (for ranking). */
  joined: string;
}

export function makeOverride(
  display: string | undefined,
  designations: Designation[] | undefined,
  extension?: Extension[],
): EntryOverride {
  const words: string[] = display ? tokenize(display) : [];
  const joined = words.join(' ');
  for (const d of designations ?? []) if (d.value) words.push(...tokenize(d.value));
  return { display, designations, words, joined, ...(extension?.length ? { extension } : {}) };
}

/** Entry flag (beside the index's FLAG_ABSTRACT and FLAG_INACTIVE): the entry shows its code system version
 * (its value set names the code system in several versions). */
export const FLAG_SHOW_VERSION = 64;

/** An entry from a whole-system include (nested in the expansion unless a text filter made it a search). */
export const NEST_WHOLE_SYSTEM = 1;
/** An entry from an include whose filters are all subsumption (is-a, descendent-of): nested in every case. */
export const NEST_BRANCH = 2;

/** What a cached membership was computed from, re-checked before reuse. */
export interface Dependency {
  kind: 'cs' | 'vs';
  url: string;
  version?: string;
  key: string;
}

/** An ordered, duplicate-free set of concepts drawn from one or more code system indexes. A concept is the
 * same entry in every version of its code system only when `mergeVersions` (the `versionsMatch` parameter);
 * otherwise each version contributes its own entry. */
export class EntrySet {
  readonly sources: CodeSystemIndex[] = [];
  /** Per source: ordinal -> position in the entry list, or -1. */
  readonly posMaps: Int32Array[] = [];
  entSrc: Uint16Array = new Uint16Array(16);
  entOrd: Int32Array = new Int32Array(16);
  entFlags: Uint8Array = new Uint8Array(16);
  size = 0;
  readonly overrides = new Map<number, EntryOverride>();
  private readonly urlCount = new Map<string, number>();
  /** Set before the first add: a code is one entry across the versions of its code system. */
  mergeVersions = false;

  sourceIndex(src: CodeSystemIndex): number {
    let si = this.sources.indexOf(src);
    if (si < 0) {
      si = this.sources.length;
      this.sources.push(src);
      this.posMaps.push(new Int32Array(src.size).fill(-1));
      this.urlCount.set(src.url, (this.urlCount.get(src.url) ?? 0) + 1);
    }
    return si;
  }

  /** Position of a concept, also matching a same-url source of another version by code; -1 when absent. */
  positionOf(src: CodeSystemIndex, ord: number): number {
    const si = this.sources.indexOf(src);
    if (si >= 0) {
      const pos = this.posMaps[si][ord];
      if (pos >= 0 || (this.urlCount.get(src.url) ?? 0) < 2) return pos;
    }
    if (!this.urlCount.has(src.url)) return -1;
    const code = src.code(ord);
    for (let j = 0; j < this.sources.length; j++) {
      const other = this.sources[j];
      if (other === src || other.url !== src.url) continue;
      const o = other.ordinalOf(code);
      if (o >= 0 && this.posMaps[j][o] >= 0) return this.posMaps[j][o];
    }
    return -1;
  }

  /** Is the concept here, in any version of its code system? */
  has(src: CodeSystemIndex, ord: number): boolean {
    return this.positionOf(src, ord) >= 0;
  }

  /** Is the concept here in this version (in any version when mergeVersions)? */
  hasVersion(src: CodeSystemIndex, ord: number): boolean {
    if (this.mergeVersions) return this.has(src, ord);
    const si = this.sources.indexOf(src);
    return si >= 0 && this.posMaps[si][ord] >= 0;
  }

  /** Appends a concept unless already present (same system, version and code; same system and code when
   * mergeVersions); returns whether it was added. `flags` are added to the index's (FLAG_SHOW_VERSION). */
  add(src: CodeSystemIndex, ord: number, override?: EntryOverride, flags = 0): boolean {
    const si = this.sourceIndex(src);
    const pm = this.posMaps[si];
    if (pm[ord] >= 0) return false;
    if (this.mergeVersions && (this.urlCount.get(src.url) ?? 0) > 1 && this.positionOf(src, ord) >= 0)
      return false;
    if (this.size === this.entOrd.length) this.grow();
    const pos = this.size++;
    pm[ord] = pos;
    this.entSrc[pos] = si;
    this.entOrd[pos] = ord;
    this.entFlags[pos] = src.flags[ord] | flags;
    if (override) this.overrides.set(pos, override);
    return true;
  }

  private grow(): void {
    const cap = this.entOrd.length * 2;
    const s = new Uint16Array(cap);
    s.set(this.entSrc);
    const o = new Int32Array(cap);
    o.set(this.entOrd);
    const f = new Uint8Array(cap);
    f.set(this.entFlags);
    this.entSrc = s;
    this.entOrd = o;
    this.entFlags = f;
  }

  /** Trims the entry arrays to size; nothing is added after. */
  seal(): void {
    this.entSrc = this.entSrc.slice(0, this.size);
    this.entOrd = this.entOrd.slice(0, this.size);
    this.entFlags = this.entFlags.slice(0, this.size);
    // One whole code system in ordinal order (an "all of X" value set): the position map is the identity, the
    // same numbers as entOrd, so one array serves both (4 MB at a million concepts).
    if (this.sources.length === 1 && this.size === this.sources[0].size) {
      const ord = this.entOrd;
      let identity = true;
      for (let i = 0; identity && i < ord.length; i++) identity = ord[i] === i;
      if (identity) this.posMaps[0] = ord;
    }
  }
}

/** A filter's result: the exact total and the ranked positions, all of them or (not complete) the first ones. */
export interface FilterResult {
  total: number;
  positions: Int32Array;
  complete: boolean;
}

/** A value set's evaluated compose, cached by the engine. */
export class Membership extends EntrySet {
  deps: Dependency[] = [];
  usedValueSets: string[] = [];
  /** Version parameters that chose a code system version (`name|system|version`): echoed in the expansion. */
  versionParams: string[] = [];
  /** Per position: NEST_* (0: always flat, e.g. an enumerated concept); undefined when no entry may nest. */
  nest?: Uint8Array;
  /** The expansion cannot be a hierarchy (a concept list, an import, several filters, a concept reached twice
   * or through several parents): every entry is at the top level. */
  flat = false;
  /** `system|version` of the fragments (content `fragment`) an include used: the expansion may be incomplete. */
  fragments: string[] = [];
  /** The value set's includes and excludes name one code system in several versions but never the same one
   * twice: its exclusions remove codes from every version (`versionsMatch` is on, and echoed). */
  versionsMatched = false;

  /** Records how the entry at pos may keep its hierarchy (see NEST_*). */
  markNest(pos: number, how: number): void {
    if (!this.nest || this.nest.length <= pos) {
      const grown = new Uint8Array(Math.max(16, this.entOrd.length, pos + 1));
      if (this.nest) grown.set(this.nest);
      this.nest = grown;
    }
    this.nest[pos] = how;
  }

  /** `system|version` of every code system an include (of this value set or an imported one) used, members or
   * not: an include whose filter matched nothing still used its code system. */
  includedSystems: string[] = [];

  /** `system|version` of each code system a member comes from, then those included without members (expansion
   * parameter `used-codesystem`). */
  usedCodeSystems(): readonly string[] {
    if (!this.usedCache) {
      const out = new Set<string>();
      for (const s of this.sources) out.add(s.version ? `${s.url}|${s.version}` : s.url);
      for (const u of this.includedSystems) out.add(u);
      this.usedCache = [...out];
    }
    return this.usedCache;
  }
  private usedCache?: string[];

  private wholeSystem?: boolean;
  /** True when the entries are exactly one code system's concepts in ordinal order (position = ordinal). */
  isWholeSystemInOrder(): boolean {
    if (this.wholeSystem === undefined) {
      let ok = this.sources.length === 1 && this.size === this.sources[0].size;
      const src = this.entSrc;
      const ord = this.entOrd;
      for (let i = 0; ok && i < this.size; i++) if (ord[i] !== i || src[i] !== 0) ok = false;
      this.wholeSystem = ok;
    }
    return this.wholeSystem;
  }

  private readonly flagPositions = new Map<number, Int32Array>();
  /** Positions of the entries with none of the flags in mask (e.g. FLAG_INACTIVE for activeOnly). */
  positionsWithout(mask: number): Int32Array {
    let p = this.flagPositions.get(mask);
    if (!p) {
      const out = new Int32Array(this.size);
      let n = 0;
      for (let i = 0; i < this.size; i++) if ((this.entFlags[i] & mask) === 0) out[n++] = i;
      p = out.slice(0, n);
      this.flagPositions.set(mask, p);
    }
    return p;
  }

  // Small LRU of filtered + ranked position lists, bounded in bytes.
  private readonly filterCache = new Map<string, FilterResult>();
  private filterCacheBytes = 0;
  static filterCacheBudget = 4 * 1024 * 1024;

  cachedFilter(key: string): FilterResult | undefined {
    const hit = this.filterCache.get(key);
    if (hit) {
      this.filterCache.delete(key);
      this.filterCache.set(key, hit);
    }
    return hit;
  }

  storeFilter(key: string, result: FilterResult): void {
    const budget = Membership.filterCacheBudget;
    if (result.positions.byteLength > budget / 8) return;
    const old = this.filterCache.get(key);
    if (old) {
      this.filterCache.delete(key);
      this.filterCacheBytes -= old.positions.byteLength + key.length * 2 + 64;
    }
    this.filterCache.set(key, result);
    this.filterCacheBytes += result.positions.byteLength + key.length * 2 + 64;
    while (this.filterCacheBytes > budget || this.filterCache.size > 512) {
      const [k, v] = this.filterCache.entries().next().value as [string, FilterResult];
      this.filterCache.delete(k);
      this.filterCacheBytes -= v.positions.byteLength + k.length * 2 + 64;
    }
  }

  memoryEstimateBytes(): number {
    let b = this.entSrc.byteLength + this.entOrd.byteLength + this.entFlags.byteLength;
    for (const p of this.posMaps) if (p !== this.entOrd) b += p.byteLength;
    for (const p of this.flagPositions.values()) b += p.byteLength;
    return b + this.filterCacheBytes + this.overrides.size * 120;
  }
}
