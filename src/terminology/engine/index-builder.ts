// Builds a CodeSystemIndex concept by concept: codes and displays into compact columns, parents resolved once every
// code is known, the word dictionary sorted and its posting lists, prefix counts and case-insensitive code lookup
// computed at the end (in steps, so a million concepts can be finished between other requests).
import {
  CodeSystemIndex,
  FLAG_ABSTRACT,
  FLAG_DEFINITION,
  FLAG_INACTIVE,
  type TokenIds,
} from './code-system-index.js';
import {
  GrowI32,
  GrowU8,
  hashCapacity,
  hashString,
  RowHash,
  StringColumnBuilder,
  type StringColumn,
} from './compact.js';
import { codeKey, sortCodeOrder } from './code-order.js';
import { DesignationColumnsBuilder } from './designation-columns.js';
import { tokenize } from './normalize.js';
import { PropertyColumnsBuilder } from './property-columns.js';
import { StringTableBuilder } from './string-table.js';
import type { CodeSystemMeta, ConceptInput } from './types.js';

const INACTIVE_STATUSES = new Set(['inactive', 'retired']);

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
  // Designations and properties go into columns as they come (the concepts' objects are not kept).
  private readonly designations = new DesignationColumnsBuilder();
  private readonly strings = new StringTableBuilder();
  private readonly properties = new PropertyColumnsBuilder(this.strings);
  private readonly propertyCodes: Set<string>;
  // Words: temporary ids in first-seen order, remapped to sorted order at the end.
  private readonly wordTmp = new Map<string, number>();
  private readonly tmpWords: string[] = [];
  private readonly tok = new GrowI32(4096);
  /** By temporary word id: the last concept that has the word. */
  private readonly wordSeen: number[] = [];
  private readonly tokOff = new GrowI32(1024);
  private readonly dispCounts = new GrowU8(1024);
  private n = 0;

  /** Builds the index from concept rows in document order (duplicate codes: the first one wins). */
  static build(meta: CodeSystemMeta, concepts: Iterable<ConceptInput>): CodeSystemIndex {
    const b = new CodeSystemIndexBuilder(meta);
    for (const c of concepts) b.add(c);
    return b.finish();
  }

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

  /** Adds the words of a text to the current concept's; `all` keeps repeats (the display's words are read by
   * position), else a word the concept already has is left out (a designation's: only whether a concept has a
   * word counts, and SNOMED CT's fully specified names and synonyms mostly repeat the display's words). */
  private addWords(text: string, all: boolean): number {
    const ws = tokenize(text);
    const ord = this.n - 1;
    for (const w of ws) {
      let id = this.wordTmp.get(w);
      if (id === undefined) {
        id = this.tmpWords.length;
        this.wordTmp.set(w, id);
        this.tmpWords.push(w);
        this.wordSeen.push(ord);
      } else if (this.wordSeen[id] === ord) {
        if (!all) continue;
      } else this.wordSeen[id] = ord;
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
    if (c.hasDefinition || (c.definition !== undefined && c.definition !== null)) f |= FLAG_DEFINITION;
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
    this.properties.add(c.properties);
    if (c.properties) for (const p of c.properties) this.propertyCodes.add(p.code);
    const dn = display ? this.addWords(display, true) : 0;
    this.dispCounts.push(Math.min(dn, 255));
    this.designations.add(c.designations);
    if (c.designations) for (const d of c.designations) if (d.value) this.addWords(d.value, false);
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

    // Ordinals by code, for typeahead by code prefix.
    const caseSensitive = meta.caseSensitive === true;
    const keys: string[] = new Array<string>(n);
    for (let i = 0; i < n; i++) {
      if ((i & 0x3fff) === 0x3fff) yield;
      keys[i] = codeKey(codes.get(i) ?? '', caseSensitive);
    }
    const codeOrder = yield* sortCodeOrder(keys);

    const displays = this.displays.done();
    yield;
    return new CodeSystemIndex(meta, {
      size: n,
      codes,
      displays,
      codeSlots: slots,
      lowerSlots,
      codeOrder,
      definitionFlags: true,
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
      designations: this.designations.done(),
      properties: this.properties.done(),
      strings: this.strings.done(),
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
