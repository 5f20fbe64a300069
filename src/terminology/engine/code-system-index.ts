// An immutable, indexed code system: concept arrays by ordinal (document order), code lookup, hierarchy in CSR
// form, and a word dictionary (sorted unique normalised words with posting lists) for the `filter` parameter.
import { RowHash, type StringColumn } from './compact.js';
import { codeKey, prefixSlice } from './code-order.js';
import { designationBytes, designationsAt, type DesignationColumns } from './designation-columns.js';
import { PropertyReader, type PropertyColumns } from './property-columns.js';
import { scratchBits, scratchInt32, SLOT_INTERSECT, SLOT_UNION } from './scratch.js';
import { lowerBound, smallestOfLists, upperByScan } from './sorted-lists.js';
import type { StringTable } from './string-table.js';
import type { CodeSystemMeta, ConceptProperty, Designation } from './types.js';

export const FLAG_ABSTRACT = 1;
export const FLAG_INACTIVE = 2;
/** The concept has a definition (only meaningful when IndexParts.definitionFlags says the index sets it). */
export const FLAG_DEFINITION = 4;

const EMPTY = new Int32Array(0);

/** A half-open range [lo, hi) of word ids. */
export interface WordRange {
  lo: number;
  hi: number;
}

let objectCounter = 0;

/** Word ids per concept (see IndexParts.tok). */
export type TokenIds = Int32Array | Uint16Array;

/** Everything an index holds, as built or as read back from a file (index-file.ts). */
const NO_ORDS = new Int32Array(0);

export interface IndexParts {
  size: number;
  codes: StringColumn;
  displays: StringColumn;
  /** RowHash slots: code -> ordinal (first occurrence). */
  codeSlots: Int32Array;
  /** RowHash slots: lowercased code -> ordinal, for a case-insensitive system. */
  lowerSlots?: Int32Array;
  /** FLAG_DEFINITION is set for every concept with a definition (false in index files written before it). */
  definitionFlags?: boolean;
  /** Ordinals sorted by code (lowercased unless case-sensitive), for code-prefix matches; absent in old files. */
  codeOrder?: Int32Array;
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
  designations: DesignationColumns;
  properties: PropertyColumns;
  /** The property columns' strings. */
  strings: StringTable;
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
  /** Some concept has a designation. */
  readonly hasDesignations: boolean;
  /** The concepts' properties, row by row (relations.ts scans them all without making objects). */
  readonly propertyRows: PropertyReader;
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
  private readonly codeOrder: Int32Array | undefined;
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
  private readonly designationCols: DesignationColumns;
  private codesView?: ReadonlyArray<string>;
  private displaysView?: ReadonlyArray<string | undefined>;

  /** An index over prepared parts (CodeSystemIndexBuilder or readIndexFile make them). */
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
    this.codeOrder = parts.codeOrder;
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
    this.designationCols = parts.designations;
    this.hasDesignations = parts.designations.kind.length > 0;
    this.propertyRows = new PropertyReader(parts.properties, parts.strings);
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

  /** False when the concept surely has no definition (so $lookup need not ask the database for it). */
  mayHaveDefinition(ord: number): boolean {
    return this.parts.definitionFlags !== true || (this.flags[ord] & FLAG_DEFINITION) !== 0;
  }

  /** Ordinals whose code starts with `prefix` (case-insensitive unless the system is case-sensitive), in code
   * order: two binary searches. Empty for an index read from a file written before the code order was kept. */
  codePrefixOrdinals(prefix: string): Int32Array {
    if (!this.codeOrder || prefix === '') return NO_ORDS;
    const cs = this.caseSensitive;
    return prefixSlice(
      this.codeOrder,
      (ord) => codeKey(this.codeCol.get(ord) ?? '', cs),
      codeKey(prefix, cs),
    );
  }

  /** True when the concept's code starts with `key` (a prefix as codeKey makes it for this system). */
  codeStartsWith(ord: number, key: string): boolean {
    return codeKey(this.codeCol.get(ord) ?? '', this.caseSensitive).startsWith(key);
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

  /** The designations of a concept, as new objects (empty when it has none). */
  designationsOf(ord: number): Designation[] {
    return designationsAt(this.designationCols, ord);
  }

  /** The properties of a concept, as new objects (empty when it has none). */
  propertiesOf(ord: number): ConceptProperty[] {
    return this.propertyRows.propertiesOf(ord);
  }

  /** String values of property `code` on a concept (codes, strings, booleans, numbers, coding codes). */
  propertyValues(ord: number, code: string): string[] {
    return this.propertyValueReader(code)(ord);
  }

  /** propertyValues(ord, code) for one code and many concepts (the code is looked up once). */
  propertyValueReader(code: string): (ord: number) => string[] {
    return this.propertyRows.valueReader(code);
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
        const bits = scratchBits((this.size + 31) >>> 5);
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
    const bits = scratchBits(words);
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
    bytes += designationBytes(this.designationCols);
    bytes += this.propertyRows.byteLength() + this.propertyRows.strings.byteLength();
    for (const c of this.propertyCodes) bytes += str(c) + 40;
    // A Map entry (key, value, hash chain) is ~40 bytes; its strings are mostly shared ('active', 'retired').
    bytes += this.statuses.size * 40;
    return bytes;
  }
}
