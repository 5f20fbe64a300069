// An immutable, indexed code system: concept arrays by ordinal (document order), code lookup, hierarchy in CSR
// form, and a word dictionary (sorted unique normalised words with posting lists) for the `filter` parameter.
import {
  GrowI32,
  GrowU8,
  hashCapacity,
  hashString,
  RowHash,
  StringColumnBuilder,
  type StringColumn,
} from './compact.js';
import { tokenize } from './normalize.js';
import type { CodeSystemMeta, ConceptInput, ConceptProperty, Designation } from './types.js';

export const FLAG_ABSTRACT = 1;
export const FLAG_INACTIVE = 2;

const INACTIVE_STATUSES = new Set(['inactive', 'retired']);
const EMPTY = new Int32Array(0);

/** A half-open range [lo, hi) of word ids. */
export interface WordRange {
  lo: number;
  hi: number;
}

let objectCounter = 0;

// Reusable scratch buffers for the filter path: typed arrays above 64 bytes live outside the V8 heap, and
// allocating one per query drives full garbage collections. Results built in them are valid until the next
// call that uses the same slot.
const scratch: Int32Array[] = [];
/** A scratch Int32Array of at least `size` elements for `slot` (contents unspecified). */
export function scratchInt32(slot: number, size: number): Int32Array {
  let b = scratch[slot];
  if (!b || b.length < size) {
    b = new Int32Array(Math.max(1024, 2 ** Math.ceil(Math.log2(size + 1))));
    scratch[slot] = b;
  }
  return b;
}
let bitsScratch = new Uint32Array(0);
const SLOT_UNION = 0;
const SLOT_INTERSECT = 1;

/** Word ids per concept (see IndexParts.tok). */
export type TokenIds = Int32Array | Uint16Array;

/** Everything an index holds, as built or as read back from a file (index-file.ts). */
export interface IndexParts {
  size: number;
  codes: StringColumn;
  displays: StringColumn;
  /** RowHash slots: code -> ordinal (first occurrence). */
  codeSlots: Int32Array;
  /** RowHash slots: lowercased code -> ordinal, for a case-insensitive system. */
  lowerSlots?: Int32Array;
  flags: Uint8Array;
  parentOff: Int32Array;
  parentIdx: Int32Array;
  childOff: Int32Array;
  childIdx: Int32Array;
  words: string[];
  postOff: Int32Array;
  post: Int32Array;
  tokOff: Int32Array;
  /** Word ids: 16-bit while the dictionary has at most 65,536 words (half the memory), else 32-bit. */
  tok: TokenIds;
  dispTokCount: Uint8Array;
  /** Concepts by the first word of their display: firstPost[firstOff[w]..firstOff[w+1]) ascending. */
  firstOff: Int32Array;
  firstPost: Int32Array;
  /** prefixCount[wordStart[w] + L - 1] = concepts with a word starting with the first L characters of word w,
   * stored at the first dictionary word w with that prefix. */
  wordStart: Int32Array;
  prefixCount: Int32Array;
  statuses: Map<number, string>;
  designations: Map<number, Designation[]>;
  properties: Map<number, ConceptProperty[]>;
  propertyCodes: Set<string>;
}

export class CodeSystemIndex {
  readonly meta: Readonly<CodeSystemMeta>;
  readonly url: string;
  readonly version: string | undefined;
  /** Stable identity for caches: `id/versionId` when known, else unique per object. */
  readonly cacheKey: string;
  readonly size: number;
  /** FLAG_ABSTRACT | FLAG_INACTIVE per ordinal. */
  readonly flags: Uint8Array;
  /** The OR of every concept's flags (a filter excluding none of them needs no per-concept check). */
  readonly flagsUnion: number;
  readonly statuses: Map<number, string>;
  readonly designations: Map<number, Designation[]>;
  readonly properties: Map<number, ConceptProperty[]>;
  /** Property codes a filter may name (declared, or used by some concept). */
  readonly propertyCodes: Set<string>;
  /** Sorted unique normalised words of displays and designation values. */
  readonly words: string[];
  /** The data, for index-file.ts. */
  readonly parts: Readonly<IndexParts>;

  private readonly codeCol: StringColumn;
  private readonly displayCol: StringColumn;
  private readonly codeHash: RowHash;
  private readonly lowerHash: RowHash | undefined;
  private readonly parentOff: Int32Array;
  private readonly parentIdx: Int32Array;
  private readonly childOff: Int32Array;
  private readonly childIdx: Int32Array;
  private readonly postOff: Int32Array;
  private readonly post: Int32Array;
  /** Word ids per concept: display words first (dispTokCount of them), then designation words. */
  private readonly tokOff: Int32Array;
  private readonly tok: TokenIds;
  private readonly dispTokCount: Uint8Array;
  private readonly firstOff: Int32Array;
  private readonly firstPost: Int32Array;
  private readonly wordStart: Int32Array;
  private readonly prefixCount: Int32Array;
  private codesView?: ReadonlyArray<string>;
  private displaysView?: ReadonlyArray<string | undefined>;

  /** An index over prepared parts (CodeSystemIndex.build or readIndexFile make them). */
  constructor(meta: CodeSystemMeta, parts: IndexParts) {
    this.meta = Object.freeze({ ...meta });
    this.url = meta.url;
    this.version = meta.version;
    this.cacheKey =
      meta.id !== undefined && meta.versionId !== undefined
        ? `cs:${meta.id}/${meta.versionId}|${meta.url}|${meta.version ?? ''}`
        : `cs-obj:${++objectCounter}`;
    this.parts = parts;
    this.size = parts.size;
    this.codeCol = parts.codes;
    this.displayCol = parts.displays;
    this.codeHash = new RowHash(parts.codeSlots);
    this.lowerHash = parts.lowerSlots ? new RowHash(parts.lowerSlots) : undefined;
    this.flags = parts.flags;
    let fu = 0;
    for (let i = 0; i < parts.flags.length; i++) fu |= parts.flags[i];
    this.flagsUnion = fu;
    this.parentOff = parts.parentOff;
    this.parentIdx = parts.parentIdx;
    this.childOff = parts.childOff;
    this.childIdx = parts.childIdx;
    this.words = parts.words;
    this.postOff = parts.postOff;
    this.post = parts.post;
    this.tokOff = parts.tokOff;
    this.tok = parts.tok;
    this.dispTokCount = parts.dispTokCount;
    this.firstOff = parts.firstOff;
    this.firstPost = parts.firstPost;
    this.wordStart = parts.wordStart;
    this.prefixCount = parts.prefixCount;
    this.statuses = parts.statuses;
    this.designations = parts.designations;
    this.properties = parts.properties;
    this.propertyCodes = parts.propertyCodes;
  }

  /** The code of a concept. */
  code(ord: number): string {
    return this.codeCol.get(ord)!;
  }

  /** The display of a concept (undefined when it has none). */
  display(ord: number): string | undefined {
    return this.displayCol.get(ord);
  }

  /** Codes by ordinal, as a read-only array (each access decodes: hot paths use code()). */
  get codes(): ReadonlyArray<string> {
    return (this.codesView ??= this.codeCol.asArray() as ReadonlyArray<string>);
  }

  /** Displays by ordinal, as a read-only array (each access decodes: hot paths use display()). */
  get displays(): ReadonlyArray<string | undefined> {
    return (this.displaysView ??= this.displayCol.asArray());
  }

  /** Builds the index from concept rows in document order (duplicate codes: the first one wins). */
  static build(meta: CodeSystemMeta, concepts: Iterable<ConceptInput>): CodeSystemIndex {
    const b = new CodeSystemIndexBuilder(meta);
    for (const c of concepts) b.add(c);
    return b.finish();
  }

  get caseSensitive(): boolean {
    return this.meta.caseSensitive === true;
  }

  /** Ordinal of an exact code, or -1. */
  ordinalOf(code: string): number {
    return this.codeHash.find(code, this.codeMatches);
  }

  private readonly codeMatches = (row: number, key: string): boolean => this.codeCol.equals(row, key);
  private readonly lowerMatches = (row: number, key: string): boolean => this.codeCol.equalsLower(row, key);

  /** Ordinal of a code typed by a user: exact when the system is case-sensitive, else case-insensitive. */
  lookupCode(code: string): number {
    const exact = this.ordinalOf(code);
    if (exact >= 0 || !this.lowerHash) return exact;
    return this.lowerHash.find(code.toLowerCase(), this.lowerMatches);
  }

  parentsOf(ord: number): Int32Array {
    return this.parentIdx.subarray(this.parentOff[ord], this.parentOff[ord + 1]);
  }

  childrenOf(ord: number): Int32Array {
    return this.childIdx.subarray(this.childOff[ord], this.childOff[ord + 1]);
  }

  /** Mask of ord's descendants (transitive children), with ord itself when includeSelf. */
  descendantsMask(ord: number, includeSelf: boolean): Uint8Array {
    return this.walk(ord, includeSelf, this.childOff, this.childIdx);
  }

  /** Mask of ord's ancestors (transitive parents), with ord itself when includeSelf. */
  ancestorsMask(ord: number, includeSelf: boolean): Uint8Array {
    return this.walk(ord, includeSelf, this.parentOff, this.parentIdx);
  }

  private walk(ord: number, includeSelf: boolean, off: Int32Array, idx: Int32Array): Uint8Array {
    const mask = new Uint8Array(this.size);
    const stack = [ord];
    const seen = new Uint8Array(this.size);
    seen[ord] = 1;
    while (stack.length > 0) {
      const cur = stack.pop()!;
      for (let k = off[cur]; k < off[cur + 1]; k++) {
        const nx = idx[k];
        if (!seen[nx]) {
          seen[nx] = 1;
          mask[nx] = 1;
          stack.push(nx);
        }
      }
    }
    if (includeSelf) mask[ord] = 1;
    return mask;
  }

  /** String values of property `code` on a concept (codes, strings, booleans, numbers, coding codes). */
  propertyValues(ord: number, code: string): string[] {
    const props = this.properties.get(ord);
    if (!props) return [];
    const out: string[] = [];
    for (const p of props) {
      if (p.code !== code) continue;
      const v =
        p.valueCode ??
        p.valueString ??
        p.valueCoding?.code ??
        p.valueDateTime ??
        (p.valueBoolean !== undefined ? String(p.valueBoolean) : undefined) ??
        (p.valueInteger !== undefined ? String(p.valueInteger) : undefined) ??
        (p.valueDecimal !== undefined ? String(p.valueDecimal) : undefined);
      if (v !== undefined) out.push(v);
    }
    return out;
  }

  // ------------------------------------------------------------------ word search

  /** Ids of the dictionary words starting with prefix (a normalised word). */
  prefixRange(prefix: string): WordRange {
    const words = this.words;
    const lo = lowerBound(words, prefix);
    const last = prefix.charCodeAt(prefix.length - 1);
    const hi =
      last === 0xffff
        ? upperByScan(words, lo, prefix)
        : lowerBound(words, prefix.slice(0, -1) + String.fromCharCode(last + 1), lo);
    return { lo, hi };
  }

  /** Id of an exact dictionary word, or -1. */
  wordId(word: string): number {
    const i = lowerBound(this.words, word);
    return i < this.words.length && this.words[i] === word ? i : -1;
  }

  /** Number of postings under a word range (an upper bound of the concepts it matches). */
  postingCount(r: WordRange): number {
    return this.postOff[r.hi] - this.postOff[r.lo];
  }

  /**
   * Ordinals (ascending) of the concepts in which every range matches some word (display or designation).
   * The result is a view of internal or scratch storage: do not modify it, and consume it before the next call.
   */
  matchRanges(ranges: WordRange[]): Int32Array {
    if (ranges.length === 0) return EMPTY;
    let best = 0;
    for (let i = 0; i < ranges.length; i++) {
      const c = this.postingCount(ranges[i]);
      if (c === 0) return EMPTY;
      if (c < this.postingCount(ranges[best])) best = i;
    }
    const base = this.unionRange(ranges[best]);
    const others = ranges.filter(
      (r, i) => i !== best && !(r.lo <= ranges[best].lo && r.hi >= ranges[best].hi),
    );
    if (others.length === 0) return base;
    const out = scratchInt32(SLOT_INTERSECT, base.length);
    let cand: Int32Array = base;
    let n = base.length;
    others.sort((a, b) => this.postingCount(a) - this.postingCount(b));
    for (const r of others) {
      const start = this.postOff[r.lo];
      const end = this.postOff[r.hi];
      let m = 0;
      if (end - start <= 8 * n) {
        // A bitmap of the range's concepts (sequential reads, 1 bit per concept) tested per candidate: far fewer
        // cache misses than reading every candidate's words.
        const words = (this.size + 31) >>> 5;
        if (bitsScratch.length < words) bitsScratch = new Uint32Array(words);
        const bits = bitsScratch;
        const post = this.post;
        for (let k = start; k < end; k++) bits[post[k] >>> 5] |= 1 << (post[k] & 31);
        for (let j = 0; j < n; j++) {
          const ord = cand[j];
          if ((bits[ord >>> 5] & (1 << (ord & 31))) !== 0) out[m++] = ord;
        }
        for (let k = start; k < end; k++) bits[post[k] >>> 5] = 0;
      } else {
        const one = [r];
        for (let j = 0; j < n; j++) {
          const ord = cand[j];
          if (this.conceptHasAll(ord, one)) out[m++] = ord;
        }
      }
      cand = out;
      n = m;
      if (n === 0) break;
    }
    return out.subarray(0, n);
  }

  /** True when every range matches some word of the concept. */
  conceptHasAll(ord: number, ranges: WordRange[]): boolean {
    const from = this.tokOff[ord];
    const to = this.tokOff[ord + 1];
    const tok = this.tok;
    for (const r of ranges) {
      let hit = false;
      for (let k = from; k < to; k++) {
        const w = tok[k];
        if (w >= r.lo && w < r.hi) {
          hit = true;
          break;
        }
      }
      if (!hit) return false;
    }
    return true;
  }

  /**
   * True when the concept's display starts with the filter words: words[0..m-1] equal the first display words
   * (exactIds) and the display's word m starts with the last filter word (lastRange).
   */
  displayStartsWith(ord: number, exactIds: Int32Array, lastRange: WordRange): boolean {
    const m = exactIds.length;
    if (this.dispTokCount[ord] <= m) return false;
    const base = this.tokOff[ord];
    for (let i = 0; i < m; i++) if (this.tok[base + i] !== exactIds[i]) return false;
    const w = this.tok[base + m];
    return w >= lastRange.lo && w < lastRange.hi;
  }

  private unionRange(r: WordRange): Int32Array {
    const start = this.postOff[r.lo];
    const end = this.postOff[r.hi];
    if (r.hi - r.lo === 1) return this.post.subarray(start, end);
    const total = end - start;
    // Sorting costs ~total log total; a bitmap costs a scan of size/32 words: sort only small unions.
    if (total < 2048 || total * 4 < this.size >>> 5) {
      const arr = scratchInt32(SLOT_UNION, total).subarray(0, total);
      arr.set(this.post.subarray(start, end));
      arr.sort();
      let n = 0;
      for (let i = 0; i < arr.length; i++) if (i === 0 || arr[i] !== arr[i - 1]) arr[n++] = arr[i];
      return arr.subarray(0, n);
    }
    const words = (this.size + 31) >>> 5;
    if (bitsScratch.length < words) bitsScratch = new Uint32Array(words);
    const bits = bitsScratch;
    for (let k = start; k < end; k++) {
      const o = this.post[k];
      bits[o >>> 5] |= 1 << (o & 31);
    }
    const out = scratchInt32(SLOT_UNION, Math.min(total, this.size));
    let n = 0;
    for (let wi = 0; wi < words; wi++) {
      let w = bits[wi];
      if (w === 0) continue;
      bits[wi] = 0;
      while (w !== 0) {
        const t = w & -w;
        out[n++] = (wi << 5) + (31 - Math.clz32(t));
        w ^= t;
      }
    }
    return out.subarray(0, n);
  }

  /** Concepts with a word (display or designation) starting with `prefix` (a normalised word): exact, O(log words). */
  prefixTotal(prefix: string): number {
    const r = this.prefixRange(prefix);
    if (r.lo >= r.hi) return 0;
    return this.prefixCount[this.wordStart[r.lo] + prefix.length - 1];
  }

  /** Concepts whose display's first word is in the range (exact: each concept has one first word). */
  firstWordCount(r: WordRange): number {
    return this.firstOff[r.hi] - this.firstOff[r.lo];
  }

  /** Ordinals (ascending) of the concepts whose display's first word is the word `w`. A view: do not modify. */
  firstWordPostings(w: number): Int32Array {
    return this.firstPost.subarray(this.firstOff[w], this.firstOff[w + 1]);
  }

  /** The k smallest ordinals (ascending) whose display's first word is in the range, except `skip`. */
  firstWordSmallest(r: WordRange, k: number, skip: number): Int32Array {
    return smallestOfLists(this.firstOff, this.firstPost, r, k, skip);
  }

  /** Ordinals (ascending, unique) of the concepts with some word in the range; a scratch view (see matchRanges). */
  rangeOrdinals(r: WordRange): Int32Array {
    return this.unionRange(r);
  }

  /** True when the concept's display starts with a word of the range. */
  firstWordIn(ord: number, r: WordRange): boolean {
    if (this.dispTokCount[ord] === 0) return false;
    const w = this.tok[this.tokOff[ord]];
    return w >= r.lo && w < r.hi;
  }

  /** Approximate retained size of this index, in bytes (typed arrays included). */
  memoryEstimateBytes(): number {
    const PTR = 8;
    const str = (s: string | undefined): number =>
      s === undefined ? 0 : 16 + s.length + ((8 - (s.length % 8)) % 8);
    let bytes = this.codeCol.byteLength() + this.displayCol.byteLength();
    for (const w of this.words) bytes += str(w) + PTR;
    for (const a of [
      this.codeHash.slots,
      this.lowerHash?.slots,
      this.flags,
      this.parentOff,
      this.parentIdx,
      this.childOff,
      this.childIdx,
      this.postOff,
      this.post,
      this.tokOff,
      this.tok,
      this.dispTokCount,
      this.firstOff,
      this.firstPost,
      this.wordStart,
      this.prefixCount,
    ]) {
      if (a) bytes += a.byteLength + 64;
    }
    for (const ds of this.designations.values())
      for (const d of ds) bytes += 80 + str(d.value) + str(d.language);
    for (const ps of this.properties.values()) bytes += 40 + ps.length * 80;
    bytes += this.statuses.size * 40;
    return bytes;
  }
}

/** The k smallest values (ascending, without `skip`) of the sorted, pairwise disjoint lists off[lo..hi). */
function smallestOfLists(
  off: Int32Array,
  vals: Int32Array,
  r: WordRange,
  k: number,
  skip: number,
): Int32Array {
  const out: number[] = [];
  const nl = r.hi - r.lo;
  if (nl <= 0 || k <= 0) return new Int32Array(0);
  if (nl === 1) {
    for (let i = off[r.lo]; i < off[r.lo + 1] && out.length < k; i++) if (vals[i] !== skip) out.push(vals[i]);
    return Int32Array.from(out);
  }
  // A binary heap of list cursors keyed by their current value.
  const cur: number[] = [];
  const end: number[] = [];
  for (let w = r.lo; w < r.hi; w++) {
    if (off[w] < off[w + 1]) {
      cur.push(off[w]);
      end.push(off[w + 1]);
    }
  }
  const heap = cur.map((_, i) => i);
  const key = (h: number): number => vals[cur[heap[h]]];
  const down = (i: number): void => {
    const n = heap.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const m = l + 1 < n && key(l + 1) < key(l) ? l + 1 : l;
      if (key(m) >= key(i)) return;
      const t = heap[m];
      heap[m] = heap[i];
      heap[i] = t;
      i = m;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
  while (heap.length > 0 && out.length < k) {
    const li = heap[0];
    const v = vals[cur[li]];
    if (v !== skip) out.push(v);
    if (++cur[li] >= end[li]) {
      heap[0] = heap[heap.length - 1];
      heap.pop();
    }
    down(0);
  }
  return Int32Array.from(out);
}

function lowerBound(arr: string[], key: string, from = 0): number {
  let lo = from;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function upperByScan(arr: string[], from: number, prefix: string): number {
  let i = from;
  while (i < arr.length && arr[i].startsWith(prefix)) i++;
  return i;
}

/**
 * Builds a CodeSystemIndex concept by concept (document order; a duplicate code: the first one wins), so a large
 * code system can be fed in batches straight from the database without holding every row at once.
 */
export class CodeSystemIndexBuilder {
  private readonly codes = new StringColumnBuilder();
  private readonly displays = new StringColumnBuilder();
  private readonly hashes = new GrowI32(1024);
  private slots = new Int32Array(16);
  private readonly flags = new GrowU8(1024);
  /** Parent references per concept: an ordinal, or -(k+1) for pendingParents[k] (a code not seen yet). */
  private readonly parentRaw = new GrowI32(1024);
  private readonly parentRawOff = new GrowI32(1024);
  private readonly pendingParents: string[] = [];
  private readonly statuses = new Map<number, string>();
  private readonly designations = new Map<number, Designation[]>();
  private readonly properties = new Map<number, ConceptProperty[]>();
  private readonly propertyCodes: Set<string>;
  // Words: temporary ids in first-seen order, remapped to sorted order at the end.
  private readonly wordTmp = new Map<string, number>();
  private readonly tmpWords: string[] = [];
  private readonly tok = new GrowI32(4096);
  private readonly tokOff = new GrowI32(1024);
  private readonly dispCounts = new GrowU8(1024);
  private n = 0;

  constructor(private readonly meta: CodeSystemMeta) {
    this.propertyCodes = new Set((meta.properties ?? []).map((p) => p.code));
    this.parentRawOff.push(0);
    this.tokOff.push(0);
  }

  /** Concepts added so far. */
  get size(): number {
    return this.n;
  }

  private find(code: string, h: number): number {
    const slots = this.slots;
    const mask = slots.length - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const v = slots[i];
      if (v === 0) return -1;
      if (this.hashes.a[v - 1] === (h | 0) && this.codes.equals(v - 1, code)) return v - 1;
    }
  }

  private place(slots: Int32Array, h: number, row: number): void {
    const mask = slots.length - 1;
    let i = h & mask;
    while (slots[i] !== 0) i = (i + 1) & mask;
    slots[i] = row + 1;
  }

  private addWords(text: string): number {
    const ws = tokenize(text);
    for (const w of ws) {
      let id = this.wordTmp.get(w);
      if (id === undefined) {
        id = this.tmpWords.length;
        this.wordTmp.set(w, id);
        this.tmpWords.push(w);
      }
      this.tok.push(id);
    }
    return ws.length;
  }

  /** True when a concept with this code was added. */
  has(code: string): boolean {
    return this.find(code, hashString(code)) >= 0;
  }

  /** Adds one concept (ignored when its code was seen before or is not a string). */
  add(c: ConceptInput): void {
    if (typeof c.code !== 'string') return;
    const h = hashString(c.code);
    if (this.find(c.code, h) >= 0) return; // first occurrence wins
    const ord = this.n++;
    this.codes.push(c.code);
    this.hashes.push(h | 0);
    if (this.n * 2 > this.slots.length) {
      const bigger = new Int32Array(this.slots.length * 2);
      for (let r = 0; r < this.n - 1; r++) this.place(bigger, this.hashes.a[r] >>> 0, r);
      this.slots = bigger;
    }
    this.place(this.slots, h, ord);
    const display = c.display ?? undefined;
    this.displays.push(display);
    let f = 0;
    if (c.notSelectable) f |= FLAG_ABSTRACT;
    const status = c.status ?? undefined;
    if (c.inactive || (status !== undefined && INACTIVE_STATUSES.has(status))) f |= FLAG_INACTIVE;
    this.flags.push(f);
    if (status !== undefined) this.statuses.set(ord, status);
    if (c.parents) {
      for (const pc of c.parents) {
        const p = this.find(pc, hashString(pc));
        if (p >= 0) this.parentRaw.push(p);
        else {
          this.pendingParents.push(pc);
          this.parentRaw.push(-this.pendingParents.length);
        }
      }
    }
    this.parentRawOff.push(this.parentRaw.n);
    if (c.properties && c.properties.length > 0) {
      this.properties.set(ord, c.properties);
      for (const p of c.properties) this.propertyCodes.add(p.code);
    }
    const dn = display ? this.addWords(display) : 0;
    this.dispCounts.push(Math.min(dn, 255));
    if (c.designations && c.designations.length > 0) {
      this.designations.set(ord, c.designations);
      for (const d of c.designations) if (d.value) this.addWords(d.value);
    }
    this.tokOff.push(this.tok.n);
  }

  /** The index (the builder must not be used afterwards); `meta` replaces the builder's (a streamed import learns
   * the CodeSystem's id and versionId only once its concepts are written). */
  finish(meta: CodeSystemMeta = this.meta): CodeSystemIndex {
    const steps = this.steps(meta);
    let r = steps.next();
    while (!r.done) r = steps.next();
    return r.value;
  }

  /** finish(), giving the event loop a turn every ~10 ms (a million concepts take about a second to finish). */
  async finishAsync(): Promise<CodeSystemIndex> {
    const steps = this.steps();
    let sliceStart = performance.now();
    let r = steps.next();
    while (!r.done) {
      if (performance.now() - sliceStart > 10) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
      r = steps.next();
    }
    return r.value;
  }

  /** The work of finish(), yielding (no value) every 64k items so that it can be spread over event-loop turns. */
  private *steps(meta: CodeSystemMeta = this.meta): Generator<void, CodeSystemIndex> {
    const n = this.n;
    const codes = this.codes.done();
    const slots = this.slots;
    const codeHash = new RowHash(slots);
    const codeMatches = (row: number, key: string): boolean => codes.equals(row, key);

    // Hierarchy (CSR both ways); unknown parent codes, self-references and repeats are dropped.
    const raw = this.parentRaw.a;
    const rawOff = this.parentRawOff.a;
    const pOff = new Int32Array(n + 1);
    const pList = new GrowI32(Math.max(16, this.parentRaw.n));
    const childCount = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const from = pList.n;
      if ((i & 0x3fff) === 0x3fff) yield;
      for (let k = rawOff[i]; k < rawOff[i + 1]; k++) {
        let p = raw[k];
        if (p < 0) p = codeHash.find(this.pendingParents[-p - 1], codeMatches);
        if (p < 0 || p === i) continue;
        let dup = false;
        for (let j = from; j < pList.n; j++) if (pList.a[j] === p) dup = true;
        if (dup) continue;
        pList.push(p);
        childCount[p]++;
      }
      pOff[i + 1] = pList.n;
    }
    const parentIdx = pList.done();
    const cOff = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) cOff[i + 1] = cOff[i] + childCount[i];
    const cIdx = new Int32Array(parentIdx.length);
    const cFill = cOff.slice(0, n);
    for (let i = 0; i < n; i++) {
      if ((i & 0x3fff) === 0x3fff) yield;
      for (let k = pOff[i]; k < pOff[i + 1]; k++) cIdx[cFill[parentIdx[k]]++] = i;
    }

    // Word dictionary: sort, remap token ids, build posting lists (ordinals ascending, unique per word).
    const tmpWords = this.tmpWords;
    const order = tmpWords.map((_, i) => i).sort((a, b) => (tmpWords[a] < tmpWords[b] ? -1 : 1));
    const remap = new Int32Array(tmpWords.length);
    order.forEach((tmpId, sortedId) => (remap[tmpId] = sortedId));
    const words = order.map((i) => tmpWords[i]);
    const tok32 = this.tok.done();
    for (let i = 0; i < tok32.length; i++) {
      if ((i & 0x3ffff) === 0x3ffff) yield;
      tok32[i] = remap[tok32[i]];
    }
    // At a million concepts the word ids are ~4 million: 16-bit ids save ~8 MB whenever the dictionary allows.
    const tok: TokenIds = tmpWords.length <= 0x10000 ? Uint16Array.from(tok32) : tok32;
    const tokOff = this.tokOff.done();
    const dispTokCount = this.dispCounts.done();
    const nw = words.length;
    const counts = new Int32Array(nw);
    const last = new Int32Array(nw).fill(-1);
    for (let i = 0; i < n; i++) {
      if ((i & 0x3fff) === 0x3fff) yield;
      for (let k = tokOff[i]; k < tokOff[i + 1]; k++) {
        const w = tok[k];
        if (last[w] !== i) {
          last[w] = i;
          counts[w]++;
        }
      }
    }
    const postOff = new Int32Array(nw + 1);
    for (let w = 0; w < nw; w++) postOff[w + 1] = postOff[w] + counts[w];
    const post = new Int32Array(postOff[nw]);
    const fill = postOff.slice(0, nw);
    last.fill(-1);
    for (let i = 0; i < n; i++) {
      if ((i & 0x3fff) === 0x3fff) yield;
      for (let k = tokOff[i]; k < tokOff[i + 1]; k++) {
        const w = tok[k];
        if (last[w] !== i) {
          last[w] = i;
          post[fill[w]++] = i;
        }
      }
    }

    // Concepts by the first word of their display (for "display starts with the filter").
    const firstOff = new Int32Array(nw + 1);
    for (let i = 0; i < n; i++) if (dispTokCount[i] > 0) firstOff[tok[tokOff[i]] + 1]++;
    for (let w = 0; w < nw; w++) firstOff[w + 1] += firstOff[w];
    const firstPost = new Int32Array(firstOff[nw]);
    const ffill = firstOff.slice(0, nw);
    for (let i = 0; i < n; i++) if (dispTokCount[i] > 0) firstPost[ffill[tok[tokOff[i]]]++] = i;

    yield;
    const { wordStart, prefixCount } = yield* prefixCounts(words, n, tok, tokOff);

    let lowerSlots: Int32Array | undefined;
    if (this.meta.caseSensitive !== true) {
      lowerSlots = new Int32Array(hashCapacity(n));
      const lowerHash = new RowHash(lowerSlots);
      for (let i = 0; i < n; i++) {
        if ((i & 0x3fff) === 0x3fff) yield;
        // Same key as lookupCode's code.toLowerCase(), without making a string per concept (ASCII codes).
        lowerHash.insertHashed(codes.hashLower(i), i, (row) => sameLower(codes, row, i));
      }
    }

    const displays = this.displays.done();
    yield;
    return new CodeSystemIndex(meta, {
      size: n,
      codes,
      displays,
      codeSlots: slots,
      lowerSlots,
      flags: this.flags.done(),
      parentOff: pOff,
      parentIdx,
      childOff: cOff,
      childIdx: cIdx,
      words,
      postOff,
      post,
      tokOff,
      tok,
      dispTokCount,
      firstOff,
      firstPost,
      wordStart,
      prefixCount,
      statuses: this.statuses,
      designations: this.designations,
      properties: this.properties,
      propertyCodes: this.propertyCodes,
    });
  }
}

/** True when rows a and b of the column are equal ignoring case (toLowerCase). */
function sameLower(col: StringColumn, a: number, b: number): boolean {
  return col.hashLower(a) === col.hashLower(b) && col.equalsLower(a, col.get(b)!.toLowerCase());
}

function commonPrefix(a: string, b: string): number {
  const m = Math.min(a.length, b.length);
  let i = 0;
  while (i < m && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * For every prefix of a dictionary word, how many concepts have some word starting with it (each concept counted
 * once): a concept's distinct words in dictionary order add one to each prefix of a word longer than what it
 * shares with the previous word (the prefixes shorter than that were counted with the previous word).
 */
function* prefixCounts(
  words: string[],
  n: number,
  tok: TokenIds,
  tokOff: Int32Array,
): Generator<void, { wordStart: Int32Array; prefixCount: Int32Array }> {
  const nw = words.length;
  const wordStart = new Int32Array(nw + 1);
  for (let w = 0; w < nw; w++) wordStart[w + 1] = wordStart[w] + words[w].length;
  // node[wordStart[w] + L - 1]: where the count of the first L characters of w is kept (its first word).
  const node = new Int32Array(wordStart[nw]);
  for (let w = 0; w < nw; w++) {
    const shared = w > 0 ? commonPrefix(words[w - 1], words[w]) : 0;
    for (let L = 1; L <= words[w].length; L++) {
      node[wordStart[w] + L - 1] = L <= shared ? node[wordStart[w - 1] + L - 1] : wordStart[w] + L - 1;
    }
  }
  const prefixCount = new Int32Array(wordStart[nw]);
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    if ((i & 0x3fff) === 0x3fff) yield;
    const from = tokOff[i];
    const to = tokOff[i + 1];
    if (from === to) continue;
    ids.length = 0;
    for (let k = from; k < to; k++) ids.push(tok[k]);
    if (ids.length > 1) ids.sort((a, b) => a - b);
    let prev = -1;
    for (const w of ids) {
      if (w === prev) continue;
      const shared = prev < 0 ? 0 : commonPrefix(words[prev], words[w]);
      const base = wordStart[w];
      for (let L = shared + 1; L <= words[w].length; L++) prefixCount[node[base + L - 1]]++;
      prev = w;
    }
  }
  return { wordStart, prefixCount };
}
