// Filter ranking: the entries of a membership whose text matches a `filter`, ranked (exact code, then displays that
// start with the filter, then the rest, each class in the membership's order). A whole code system in its own
// order takes a path whose cost does not grow with the matches (only the page is ranked); anything else ranks every
// match. The normalised filter is prepared once per request.
import type { CodeSystemIndex, WordRange } from './code-system-index.js';
import { invalid } from './errors.js';
import { displayOf, type OutputSettings } from './entries.js';
import type { EntryOverride, FilterResult, Membership } from './membership.js';
import { tokenize } from './normalize.js';
import { codeKey } from './code-order.js';
import { scratchInt32, SLOT_REST, SLOT_STARTS } from './scratch.js';
import { DEFAULT_EXPAND_LIMITS, type ExpandLimits } from './types.js';

/** A `filter` parameter, normalised. */
export interface PreparedFilter {
  /** As given, trimmed (an exact code matches it). */
  raw: string;
  /** The normalised words in order (for "display starts with the filter"). */
  words: string[];
  /** The distinct words (for matching: a repeated word costs nothing more). */
  distinct: string[];
  /** The normalised words joined by single spaces (compared with a display's, likewise joined). */
  joined: string;
  /** The filter as a code prefix (codePrefixOf), if it can be one. */
  codePrefix?: string;
}

/** The longest filter taken as a code prefix. */
const CODE_PREFIX_MAX = 64;

/**
 * Whether a filter is also matched against the start of codes (`4046` finds 404684003): one token of 2 or more
 * characters with a digit in it. SNOMED CT, LOINC and ICD codes have digits and words rarely do, so a word filter
 * never pays for code matching and ranks as before.
 */
export function codePrefixOf(raw: string): string | undefined {
  if (raw.length < 2 || raw.length > CODE_PREFIX_MAX || /\s/.test(raw) || !/\d/.test(raw)) return undefined;
  return raw;
}

/** The normalised form of a `filter` parameter (undefined when blank); 400 past the word limit. */
export function prepareFilter(filter: string | undefined, limits: ExpandLimits): PreparedFilter | undefined {
  const raw = filter?.trim() ?? '';
  if (raw === '') return undefined;
  const words = tokenize(raw);
  const distinct = [...new Set(words)];
  const maxWords = limits.maxFilterWords ?? DEFAULT_EXPAND_LIMITS.maxFilterWords;
  if (distinct.length > maxWords) {
    throw invalid(
      `Parameter filter has ${distinct.length} distinct words, more than the limit of ${maxWords} ` +
        `(EXPAND_FILTER_MAX_WORDS)`,
      ['filter'],
    );
  }
  return { raw, words, distinct, joined: words.join(' '), codePrefix: codePrefixOf(raw) };
}

/**
 * The filter's exact total and its ranked positions up to `need` (the page's end). A value set that is a whole code
 * system in its own order (the typeahead case: SNOMED, LOINC) takes a path whose cost does not grow with the
 * number of matches: totals come from per-prefix counts or one pass over the rarest word's postings, the
 * "display starts with the filter" class from postings by first display word, and only the page is ranked.
 * Anything else (several systems, subsets, compose display overrides, flags to exclude, a display language with
 * designations) ranks every match (filterAndRank). Both give the same order.
 */
export function filterPage(
  m: Membership,
  f: PreparedFilter,
  excludeMask: number,
  chooser: OutputSettings | undefined,
  need: number,
): FilterResult {
  const src = m.sources[0];
  if (
    m.sources.length === 1 &&
    m.overrides.size === 0 &&
    f.distinct.length > 0 &&
    (excludeMask & src.flagsUnion) === 0 &&
    (chooser === undefined ||
      (!src.hasDesignations && chooser.supplements.of(src.url).length === 0 && !chooser.langs)) &&
    m.isWholeSystemInOrder()
  ) {
    return wholeSystemPage(src, f, need);
  }
  const positions = filterAndRank(m, f, excludeMask, chooser);
  return { total: positions.length, positions, complete: true };
}

/** Limits for warmFilterPaths's filters (only the page of each is computed). */
const WARM_LIMITS = { ...DEFAULT_EXPAND_LIMITS, maxUnpaged: 0 };

/**
 * Runs the whole-system filter paths over a freshly loaded index a few dozen times, one pair of filters per
 * event-loop turn, so that V8 has optimised them before users' first filters arrive: on 1,000,000 concepts a new
 * two-word filter cost ~1 ms for the first ~30 calls of a process and 0.2-0.3 ms once optimised (in process).
 * 64 rounds were not enough (the first real filters still deoptimised and re-optimised matchRanges); 256 take
 * ~100 ms of CPU in ~1 ms turns. The filters are words of the index's own dictionary; nothing is cached by this.
 */
export async function warmFilterPaths(src: CodeSystemIndex, rounds = 256): Promise<void> {
  const words = src.words;
  if (words.length < 2) return;
  for (let i = 0; i < rounds; i++) {
    const a = words[(i * 7919) % words.length];
    const b = words[(i * 104_729 + 13) % words.length];
    const one = prepareFilter(a.slice(0, Math.max(1, a.length - 1)), WARM_LIMITS);
    const two = prepareFilter(`${a} ${b.slice(0, Math.max(1, b.length - 2))}`, WARM_LIMITS);
    if (one) wholeSystemPage(src, one, 20);
    if (two) wholeSystemPage(src, two, 20);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

const NO_ORDINALS = new Int32Array(0);

/** filterPage for a membership whose positions are the ordinals of one code system (see there). */
function wholeSystemPage(src: CodeSystemIndex, f: PreparedFilter, need: number): FilterResult {
  const codeOrd = src.lookupCode(f.raw);
  const head = codeOrd >= 0 ? 1 : 0;
  // The other codes starting with the filter come next, in code order (none for a filter of words).
  const byCode = codePrefixHits(src, f, codeOrd);
  const nCode = byCode.length;
  const codeKeyOf = nCode > 0 ? codeKey(f.codePrefix!, src.caseSensitive) : '';
  const inCode = (ord: number): boolean => nCode > 0 && src.codeStartsWith(ord, codeKeyOf);
  const ranges = f.distinct.map((w) => src.prefixRange(w));
  if (ranges.some((r) => r.lo >= r.hi)) {
    const total = head + nCode;
    const len = Math.min(need, total);
    const positions = new Int32Array(len);
    if (head && len > 0) positions[0] = codeOrd;
    positions.set(byCode.subarray(0, len - (head && len > 0 ? 1 : 0)), head && len > 0 ? 1 : 0);
    return { total, positions, complete: len === total };
  }
  // "Starts with the filter": the display's first words equal the filter's words (in order, repeats included),
  // and its next word starts with the filter's last word.
  const nOrdered = f.words.length;
  const lastRange = src.prefixRange(f.words[nOrdered - 1]);
  const exactIds = new Int32Array(nOrdered - 1);
  let rankable = true;
  for (let i = 0; i < nOrdered - 1; i++) if ((exactIds[i] = src.wordId(f.words[i])) < 0) rankable = false;
  const isStart = (ord: number): boolean =>
    nOrdered === 1
      ? src.firstWordIn(ord, lastRange)
      : rankable && src.displayStartsWith(ord, exactIds, lastRange);
  // Code matches that the words match too (counted once, in the code class).
  let codeInWords = 0;
  let codeInStarts = 0;
  for (let j = 0; j < nCode; j++) {
    const ord = byCode[j];
    if (!src.conceptHasAll(ord, ranges)) continue;
    codeInWords++;
    if (isStart(ord)) codeInStarts++;
  }

  let startsTotal: number;
  let starts: Int32Array;
  // The concepts matching every word (several distinct words), computed once: a scratch view, consumed below.
  const matches = f.distinct.length > 1 ? src.matchRanges(ranges) : undefined;
  if (nOrdered === 1) {
    startsTotal = src.firstWordCount(lastRange) - (codeOrd >= 0 && isStart(codeOrd) ? 1 : 0) - codeInStarts;
    const want = Math.min(need, startsTotal);
    starts = src.firstWordSmallest(lastRange, want + codeInStarts, codeOrd);
    if (codeInStarts > 0) starts = starts.filter((ord) => !inCode(ord)).subarray(0, want);
  } else if (!rankable) {
    startsTotal = 0;
    starts = NO_ORDINALS;
  } else {
    // A display that starts with the filter matches every filter word, so the starts are among the matches as
    // much as among the displays beginning with the first word: test the shorter list (each test reads the
    // concept's words, a cache miss or two at a million concepts; the matches of two words are usually fewer).
    const byFirst = src.firstWordPostings(exactIds[0]);
    const cands = matches && matches.length < byFirst.length ? matches : byFirst;
    const keep: number[] = [];
    startsTotal = 0;
    for (let j = 0; j < cands.length; j++) {
      const ord = cands[j];
      if (ord === codeOrd || !src.displayStartsWith(ord, exactIds, lastRange) || inCode(ord)) continue;
      startsTotal++;
      if (keep.length < need) keep.push(ord);
    }
    starts = Int32Array.from(keep);
  }

  const restNeeded = need - head - nCode - startsTotal;
  const rest: number[] = [];
  let total: number;
  if (f.distinct.length === 1) {
    const codeMatches = codeOrd >= 0 && src.conceptHasAll(codeOrd, ranges);
    total = src.prefixTotal(f.distinct[0]) + (codeOrd >= 0 && !codeMatches ? 1 : 0) + nCode - codeInWords;
    if (restNeeded > 0) {
      const cands = src.rangeOrdinals(ranges[0]);
      for (let j = 0; j < cands.length && rest.length < restNeeded; j++) {
        const ord = cands[j];
        if (ord !== codeOrd && !isStart(ord) && !inCode(ord)) rest.push(ord);
      }
    }
  } else {
    const cands = matches!;
    let matched = 0;
    for (let j = 0; j < cands.length; j++) {
      const ord = cands[j];
      if (ord === codeOrd || inCode(ord)) continue;
      matched++;
      if (rest.length < restNeeded && !isStart(ord)) rest.push(ord);
    }
    total = matched + head + nCode;
  }

  const len = Math.min(need, head + nCode + starts.length + rest.length);
  const positions = new Int32Array(len);
  let k = 0;
  if (head && k < len) positions[k++] = codeOrd;
  for (let j = 0; j < nCode && k < len; j++) positions[k++] = byCode[j];
  for (let j = 0; j < starts.length && k < len; j++) positions[k++] = starts[j];
  for (let j = 0; j < rest.length && k < len; j++) positions[k++] = rest[j];
  return { total, positions, complete: len === total };
}

/** The ordinals whose code starts with the filter (codePrefixOf), in code order, without the exact code. */
function codePrefixHits(src: CodeSystemIndex, f: PreparedFilter, codeOrd: number): Int32Array {
  if (f.codePrefix === undefined) return NO_ORDINALS;
  const hits = src.codePrefixOrdinals(f.codePrefix);
  return codeOrd >= 0 && hits.includes(codeOrd) ? hits.filter((o) => o !== codeOrd) : hits;
}

/**
 * Positions of the entries matching the filter, ranked: exact code first, then the other codes starting with the
 * filter (when it can be a code, in code order), then displays starting with the whole normalised filter, then
 * the rest; each of the last two classes in membership order.
 */
export function filterAndRank(
  m: Membership,
  f: PreparedFilter,
  excludeMask: number,
  chooser?: OutputSettings,
): Int32Array {
  const nSrc = m.sources.length;
  const nw = f.distinct.length;
  const codeHits = new Int32Array(nSrc).fill(-1);
  const rangesBySource: WordRange[][] = [];
  let cap = m.overrides.size + 1024;
  let starts = scratchInt32(SLOT_STARTS, cap);
  let rest = scratchInt32(SLOT_REST, cap);
  const exact: number[] = [];
  const byCode: number[] = [];
  const codeKeys: string[] = [];
  let nStarts = 0;
  let nRest = 0;
  let sortStarts = false;
  let sortRest = false;
  const hasOverrides = m.overrides.size > 0;
  const entFlags = m.entFlags;

  for (let si = 0; si < nSrc; si++) {
    const src = m.sources[si];
    const pm = m.posMaps[si];
    const codeOrd = src.lookupCode(f.raw);
    if (codeOrd >= 0) {
      const pos = pm[codeOrd];
      if (pos >= 0 && (entFlags[pos] & excludeMask) === 0) {
        exact.push(pos);
        codeHits[si] = codeOrd;
      }
    }
    const hits = codePrefixHits(src, f, codeOrd);
    const codeKeyOf = hits.length > 0 ? codeKey(f.codePrefix!, src.caseSensitive) : '';
    codeKeys.push(codeKeyOf);
    for (let j = 0; j < hits.length; j++) {
      const pos = pm[hits[j]];
      if (pos >= 0 && (entFlags[pos] & excludeMask) === 0) byCode.push(pos);
    }
    const ranges = nw > 0 ? f.distinct.map((w) => src.prefixRange(w)) : [];
    rangesBySource.push(ranges);
    if (nw === 0) continue;
    const cands = src.matchRanges(ranges); // scratch: consumed before the next source
    if (cands.length === 0) continue;
    if (nStarts + nRest + cands.length > cap) {
      cap = nStarts + nRest + cands.length + m.overrides.size;
      starts = growScratch(SLOT_STARTS, starts, nStarts, cap);
      rest = growScratch(SLOT_REST, rest, nRest, cap);
    }
    // "Starts with the filter" compares the words in order, repeats included.
    const nOrdered = f.words.length;
    const exactIds = new Int32Array(nOrdered - 1);
    let rankable = true;
    for (let i = 0; i < nOrdered - 1; i++) if ((exactIds[i] = src.wordId(f.words[i])) < 0) rankable = false;
    const lastRange = src.prefixRange(f.words[nOrdered - 1]);
    // A display chosen by language or from supplements may differ from the index's display.
    const langMode = chooser !== undefined;
    let lastS = -1;
    let lastR = -1;
    for (let j = 0; j < cands.length; j++) {
      const ord = cands[j];
      const pos = pm[ord];
      if (pos < 0 || ord === codeOrd || (entFlags[pos] & excludeMask) !== 0) continue;
      if (codeKeyOf !== '' && src.codeStartsWith(ord, codeKeyOf)) continue; // in the code class
      if (hasOverrides && m.overrides.has(pos)) continue; // handled below
      let isStart: boolean;
      if (langMode) {
        const shown = displayOf(src, ord, undefined, chooser) ?? '';
        isStart = tokenize(shown).join(' ').startsWith(f.joined);
      } else {
        isStart = rankable && src.displayStartsWith(ord, exactIds, lastRange);
      }
      if (isStart) {
        if (pos < lastS) sortStarts = true;
        starts[nStarts++] = lastS = pos;
      } else {
        if (pos < lastR) sortRest = true;
        rest[nRest++] = lastR = pos;
      }
    }
    if (si > 0) sortStarts = sortRest = true;
  }

  if (hasOverrides && nw > 0) {
    for (const [pos, ov] of m.overrides) {
      if ((entFlags[pos] & excludeMask) !== 0) continue;
      const si = m.entSrc[pos];
      const src = m.sources[si];
      const ord = m.entOrd[pos];
      if (codeHits[si] === ord) continue;
      if (codeKeys[si] !== '' && src.codeStartsWith(ord, codeKeys[si])) continue;
      if (!overrideMatches(ov, f.distinct) && !src.conceptHasAll(ord, rangesBySource[si])) continue;
      const shownJoined =
        chooser !== undefined
          ? tokenize(displayOf(src, ord, ov, chooser) ?? '').join(' ')
          : ov.display !== undefined
            ? ov.joined
            : tokenize(src.display(ord) ?? '').join(' ');
      if (shownJoined.startsWith(f.joined)) starts[nStarts++] = pos;
      else rest[nRest++] = pos;
      sortStarts = sortRest = true;
    }
  }

  if (exact.length > 1) exact.sort((a, b) => a - b);
  const nHead = exact.length + byCode.length;
  const out = new Int32Array(nHead + nStarts + nRest);
  out.set(exact, 0);
  out.set(byCode, exact.length);
  out.set(starts.subarray(0, nStarts), nHead);
  out.set(rest.subarray(0, nRest), nHead + nStarts);
  if (sortStarts) out.subarray(nHead, nHead + nStarts).sort();
  if (sortRest) out.subarray(nHead + nStarts).sort();
  return out;
}

function growScratch(slot: number, cur: Int32Array, used: number, size: number): Int32Array {
  const keep = cur.slice(0, used);
  const b = scratchInt32(slot, size);
  b.set(keep);
  return b;
}

function overrideMatches(ov: EntryOverride, words: string[]): boolean {
  for (const w of words) {
    let hit = false;
    for (const x of ov.words) {
      if (x.startsWith(w)) {
        hit = true;
        break;
      }
    }
    if (!hit) return false;
  }
  return true;
}
