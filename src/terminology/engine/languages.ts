// Display languages: `displayLanguage` and Accept-Language are language-range lists (`de`, `de,*;q=0`,
// `en-US, en;q=0.9, *;q=0.1`). A display is chosen from a concept's designations (its display first) the way the
// HL7 terminology ecosystem IG's tests expect (the HL7 reference server's rule): for each requested language in
// order of quality, the first designation matching it exactly, then by language and region, then by language,
// preferring active designations and, among them, preferred ones. An implicit `*` (quality 0.01) is added unless
// the list names `*`, so a code without a designation in the language keeps its display; `*;q=0` forbids that.
import { invalid } from './errors.js';

/** One language range of a list. */
export interface LanguageRange {
  /** As written (`de-CH`, `*`). */
  code: string;
  language: string;
  script: string;
  region: string;
  variant: string;
  quality: number;
  /** Added by the server (the implicit `*`), not asked for. */
  implicit?: boolean;
}

/** The parts of a tag, for matching. */
export type LanguageTag = Omit<LanguageRange, 'quality' | 'implicit'>;

const TAG_RE = /^([A-Za-z]{1,8})(-[A-Za-z0-9]{1,8})*$/;
/** A list may be long (Accept-Language), but not endlessly. */
const MAX_RANGES = 20;

/** The parts of a BCP 47 tag (language, script, region, variant; extensions kept with the variant). */
export function parseTag(code: string): LanguageTag {
  const parts = code.split('-');
  const tag: LanguageTag = { code, language: parts[0].toLowerCase(), script: '', region: '', variant: '' };
  let i = 1;
  if (i < parts.length && /^[A-Za-z]{4}$/.test(parts[i])) tag.script = parts[i++].toLowerCase();
  if (i < parts.length && /^([A-Za-z]{2}|\d{3})$/.test(parts[i])) tag.region = parts[i++].toUpperCase();
  if (i < parts.length) tag.variant = parts.slice(i).join('-').toLowerCase();
  return tag;
}

/**
 * A language list (Accept-Language syntax) in order of quality (stable), with the implicit `*` at quality 0.01
 * when `addWildcard` and the list has none. A malformed list is a 400 naming `param`.
 */
export function parseLanguageList(value: string, param: string, addWildcard = true): LanguageRange[] {
  const entries = value.split(',').map((s) => s.trim());
  if (entries.length > MAX_RANGES) {
    throw invalid(
      `Parameter ${param} lists ${entries.length} languages, more than the limit of ${MAX_RANGES}`,
      [param],
    );
  }
  const out: LanguageRange[] = [];
  let wildcard = false;
  for (const entry of entries) {
    if (entry === '') continue;
    const [tag, ...params] = entry.split(';').map((s) => s.trim());
    let quality = 1;
    for (const p of params) {
      const m = /^q=([01](\.\d{0,3})?)$/.exec(p);
      if (!m || Number(m[1]) > 1)
        throw invalid(`Parameter ${param}: '${p}' is not a quality value (q=0 to q=1) in '${value}'`, [
          param,
        ]);
      quality = Number(m[1]);
    }
    if (tag === '*') {
      wildcard = true;
      out.push({ code: '*', language: '*', script: '', region: '', variant: '', quality });
      continue;
    }
    if (!TAG_RE.test(tag)) throw invalid(`Parameter ${param}: '${tag}' is not a language tag`, [param]);
    out.push({ ...parseTag(tag), quality });
  }
  if (addWildcard && !wildcard) {
    out.push({
      code: '*',
      language: '*',
      script: '',
      region: '',
      variant: '',
      quality: 0.01,
      implicit: true,
    });
  }
  // Array.prototype.sort is stable: equal qualities keep the order they were written in.
  return out.sort((a, b) => b.quality - a.quality);
}

/** The displayLanguage echoed in the expansion: as given, or, when it carries quality values, written the way
 * the HL7 reference server writes it (`de, *; q=0`). */
export function echoLanguageList(value: string): string {
  if (!value.includes(';')) return value;
  return value
    .split(',')
    .map((e) =>
      e
        .split(';')
        .map((s) => s.trim())
        .join('; '),
    )
    .join(', ');
}

/** How closely a range must match a tag. */
export type MatchDepth = 'full' | 'region' | 'language';

/** Does a requested range match a designation's language at this depth? (`*` matches every language.) */
export function rangeMatches(range: LanguageRange, tag: LanguageTag | undefined, depth: MatchDepth): boolean {
  if (range.quality <= 0) return false;
  if (range.language === '*') return true;
  if (!tag || range.language !== tag.language) return false;
  if (depth === 'language') return true;
  if (range.region !== tag.region || range.script !== tag.script) return false;
  return depth === 'region' || range.variant === tag.variant;
}
