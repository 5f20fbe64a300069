// An immutable, indexed code system: concept arrays by ordinal (document order), code lookup, hierarchy in CSR
// form, and a word dictionary (sorted unique normalised words with posting lists) for the `filter` parameter.
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

export class CodeSystemIndex {
  readonly meta: Readonly<CodeSystemMeta>;
  readonly url: string;
  readonly version: string | undefined;
  /** Stable identity for caches: `id/versionId` when known, else unique per object. */
  readonly cacheKey: string;
  readonly size: number;
  readonly codes: string[];
  readonly displays: Array<string | undefined>;
  /** FLAG_ABSTRACT | FLAG_INACTIVE per ordinal. */
  readonly flags: Uint8Array;
  readonly statuses: Map<number, string>;
  readonly designations: Map<number, Designation[]>;
  readonly properties: Map<number, ConceptProperty[]>;
  /** Property codes a filter may name (declared, or used by some concept). */
  readonly propertyCodes: Set<string>;

  private readonly codeMap: Map<string, number>;
  private readonly lowerCodeMap: Map<string, number> | undefined;
  private readonly parentOff: Int32Array;
  private readonly parentIdx: Int32Array;
  private readonly childOff: Int32Array;
  private readonly childIdx: Int32Array;
  /** Sorted unique normalised words of displays and designation values. */
  readonly words: string[];
  private readonly postOff: Int32Array;
  private readonly post: Int32Array;
  /** Word ids per concept: display words first (dispTokCount of them), then designation words. */
  private readonly tokOff: Int32Array;
  private readonly tok: Int32Array;
  private readonly dispTokCount: Uint8Array;

  private constructor(meta: CodeSystemMeta, concepts: Iterable<ConceptInput>) {
    this.meta = Object.freeze({ ...meta });
    this.url = meta.url;
    this.version = meta.version;
    this.cacheKey =
      meta.id !== undefined && meta.versionId !== undefined
        ? `cs:${meta.id}/${meta.versionId}|${meta.url}|${meta.version ?? ''}`
        : `cs-obj:${++objectCounter}`;

    const codes: string[] = [];
    const displays: Array<string | undefined> = [];
    const flags: number[] = [];
    const parentCodes: Array<string[] | undefined> = [];
    const codeMap = new Map<string, number>();
    this.statuses = new Map();
    this.designations = new Map();
    this.properties = new Map();
    this.propertyCodes = new Set((meta.properties ?? []).map((p) => p.code));

    // Words: temporary ids in first-seen order, remapped to sorted order at the end.
    const wordTmp = new Map<string, number>();
    const tmpWords: string[] = [];
    const tokTmp: number[] = [];
    const tokOffTmp: number[] = [0];
    const dispCounts: number[] = [];
    const addWords = (text: string): number => {
      const ws = tokenize(text);
      for (const w of ws) {
        let id = wordTmp.get(w);
        if (id === undefined) {
          id = tmpWords.length;
          wordTmp.set(w, id);
          tmpWords.push(w);
        }
        tokTmp.push(id);
      }
      return ws.length;
    };

    for (const c of concepts) {
      if (typeof c.code !== 'string' || codeMap.has(c.code)) continue; // first occurrence wins
      const ord = codes.length;
      codeMap.set(c.code, ord);
      codes.push(c.code);
      const display = c.display ?? undefined;
      displays.push(display);
      let f = 0;
      if (c.notSelectable) f |= FLAG_ABSTRACT;
      const status = c.status ?? undefined;
      if (c.inactive || (status !== undefined && INACTIVE_STATUSES.has(status))) f |= FLAG_INACTIVE;
      flags.push(f);
      if (status !== undefined) this.statuses.set(ord, status);
      parentCodes.push(c.parents && c.parents.length > 0 ? c.parents : undefined);
      if (c.properties && c.properties.length > 0) {
        this.properties.set(ord, c.properties);
        for (const p of c.properties) this.propertyCodes.add(p.code);
      }
      const dn = display ? addWords(display) : 0;
      dispCounts.push(Math.min(dn, 255));
      if (c.designations && c.designations.length > 0) {
        this.designations.set(ord, c.designations);
        for (const d of c.designations) if (d.value) addWords(d.value);
      }
      tokOffTmp.push(tokTmp.length);
    }

    const n = codes.length;
    this.size = n;
    this.codes = codes;
    this.displays = displays;
    this.flags = Uint8Array.from(flags);
    this.codeMap = codeMap;
    if (meta.caseSensitive !== true) {
      const lower = new Map<string, number>();
      for (let i = 0; i < n; i++) {
        const k = codes[i].toLowerCase();
        if (!lower.has(k)) lower.set(k, i);
      }
      this.lowerCodeMap = lower;
    }

    // Hierarchy (CSR both ways); unknown parent codes are ignored.
    const pOff = new Int32Array(n + 1);
    const pList: number[] = [];
    const childCount = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const ps = parentCodes[i];
      if (ps) {
        for (const pc of ps) {
          const p = codeMap.get(pc);
          if (p !== undefined && p !== i && !pList.slice(pOff[i]).includes(p)) {
            pList.push(p);
            childCount[p]++;
          }
        }
      }
      pOff[i + 1] = pList.length;
    }
    this.parentOff = pOff;
    this.parentIdx = Int32Array.from(pList);
    const cOff = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) cOff[i + 1] = cOff[i] + childCount[i];
    const cIdx = new Int32Array(pList.length);
    const cFill = cOff.slice(0, n);
    for (let i = 0; i < n; i++) {
      for (let k = pOff[i]; k < pOff[i + 1]; k++) cIdx[cFill[this.parentIdx[k]]++] = i;
    }
    this.childOff = cOff;
    this.childIdx = cIdx;

    // Word dictionary: sort, remap token ids, build posting lists (ordinals ascending, unique per word).
    const order = tmpWords.map((_, i) => i).sort((a, b) => (tmpWords[a] < tmpWords[b] ? -1 : 1));
    const remap = new Int32Array(tmpWords.length);
    order.forEach((tmpId, sortedId) => (remap[tmpId] = sortedId));
    this.words = order.map((i) => tmpWords[i]);
    const tok = new Int32Array(tokTmp.length);
    for (let i = 0; i < tok.length; i++) tok[i] = remap[tokTmp[i]];
    this.tok = tok;
    this.tokOff = Int32Array.from(tokOffTmp);
    this.dispTokCount = Uint8Array.from(dispCounts);
    const nw = this.words.length;
    const counts = new Int32Array(nw);
    const last = new Int32Array(nw).fill(-1);
    for (let i = 0; i < n; i++) {
      for (let k = this.tokOff[i]; k < this.tokOff[i + 1]; k++) {
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
      for (let k = this.tokOff[i]; k < this.tokOff[i + 1]; k++) {
        const w = tok[k];
        if (last[w] !== i) {
          last[w] = i;
          post[fill[w]++] = i;
        }
      }
    }
    this.postOff = postOff;
    this.post = post;
  }

  /** Builds the index from concept rows in document order (duplicate codes: the first one wins). */
  static build(meta: CodeSystemMeta, concepts: Iterable<ConceptInput>): CodeSystemIndex {
    return new CodeSystemIndex(meta, concepts);
  }

  get caseSensitive(): boolean {
    return this.meta.caseSensitive === true;
  }

  /** Ordinal of an exact code, or -1. */
  ordinalOf(code: string): number {
    return this.codeMap.get(code) ?? -1;
  }

  /** Ordinal of a code typed by a user: exact when the system is case-sensitive, else case-insensitive. */
  lookupCode(code: string): number {
    const exact = this.codeMap.get(code);
    if (exact !== undefined) return exact;
    return this.lowerCodeMap?.get(code.toLowerCase()) ?? -1;
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
    let n = 0;
    for (let j = 0; j < base.length; j++) {
      const ord = base[j];
      if (this.conceptHasAll(ord, others)) out[n++] = ord;
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
    if (total * 16 < this.size) {
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

  /** Approximate retained heap size of this index, in bytes. */
  memoryEstimateBytes(): number {
    const PTR = 8;
    const str = (s: string | undefined): number =>
      s === undefined ? 0 : 16 + s.length + ((8 - (s.length % 8)) % 8);
    let bytes = 0;
    for (const c of this.codes) bytes += str(c) + PTR;
    for (const d of this.displays) bytes += str(d) + PTR;
    for (const w of this.words) bytes += str(w) + PTR;
    bytes += this.codeMap.size * 40 + (this.lowerCodeMap?.size ?? 0) * 40;
    for (const a of [
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
    ]) {
      bytes += a.byteLength + 64;
    }
    for (const ds of this.designations.values())
      for (const d of ds) bytes += 80 + str(d.value) + str(d.language);
    for (const ps of this.properties.values()) bytes += 40 + ps.length * 80;
    bytes += this.statuses.size * 40;
    return bytes;
  }
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
