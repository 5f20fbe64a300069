// One expansion entry (`contains`) as the terminology ecosystem IG's tests expect it: its display in the
// requested language, its designations, its properties (status, those asked for with `property`, and those the
// IG derives from extensions: label, order, weight), and the concept extensions an expansion carries over. In R4
// the properties travel as cross-version extensions (R5's `contains.property`, declared in `expansion.property`).
import type { CodeSystemIndex } from './code-system-index.js';
import { FLAG_ABSTRACT, FLAG_INACTIVE } from './code-system-index.js';
import {
  ECHOED_CS_EXTENSIONS,
  ECHOED_DESIGNATION_EXTENSIONS,
  ECHOED_VS_EXTENSIONS,
  EXT,
  extensionValue,
  inMemoryDetails,
  type ConceptDetails,
} from './concept-details.js';
import {
  parseTag,
  rangeMatches,
  type LanguageRange,
  type LanguageTag,
  type MatchDepth,
} from './languages.js';
import type { EntryOverride, Membership } from './membership.js';
import type { SupplementSet } from './supplements.js';
import type { Coding, ConceptProperty, Designation, Extension, ValueSetContains } from './types.js';

/** The use of the designation that stands for a concept's display. */
export const DISPLAY_USE: Coding = {
  system: 'http://terminology.hl7.org/CodeSystem/hl7TermMaintInfra',
  code: 'preferredForLanguage',
  display: 'Preferred For Language',
};
const SNOMED = 'http://snomed.info/sct';
const SNOMED_PREFERRED = '900000000000548007';
const SNOMED_SYNONYM = '900000000000013009';
const DESIGNATION_USAGE = 'http://terminology.hl7.org/CodeSystem/designation-usage';
const CONCEPT_PROPERTY = 'http://hl7.org/fhir/concept-properties#';
const BCP47 = 'urn:ietf:bcp:47';

/** What the entries of one expansion show, beyond code and system. */
export interface OutputSettings {
  /** Display languages in order of preference (none: the code system's display). */
  langs?: LanguageRange[];
  includeDesignations: boolean;
  /** `designation` parameters: `system|code` of a use, or `urn:ietf:bcp:47|<language>`. */
  designations?: readonly string[];
  /** `property` parameters. */
  properties: readonly string[];
  supplements: SupplementSet;
  /** Concept details loaded for this expansion (stored code systems), by source. */
  loaded?: Map<CodeSystemIndex, Map<number, ConceptDetails>>;
  /** Per membership source (entSrc): its concept details, held in memory or loaded (set by prepareSources). */
  bySource?: Array<Map<number, ConceptDetails> | undefined>;
  /** The value set's language (its displays and designations without one are in it). */
  vsLanguage?: string;
}

/** The properties an expansion declares (`expansion.property`), in first-use order; a uri names one property
 * whatever its code. */
export class PropertyDeclarations {
  private readonly list: Array<{ code: string; uri?: string }> = [];

  /** Declares a property and returns the code its values use. */
  declare(code: string, uri: string | undefined): string {
    const found = uri
      ? this.list.find((p) => p.uri === uri || (p.code === code && !p.uri))
      : this.list.find((p) => p.code === code);
    if (!found) {
      this.list.push(uri ? { code, uri } : { code });
      return code;
    }
    if (uri && !found.uri) found.uri = uri;
    return found.code;
  }

  get size(): number {
    return this.list.length;
  }

  /** The declarations as R4 carries them (expansion.extension). */
  toExtensions(): Extension[] {
    return this.list.map((p) => ({
      url: EXT.expansionProperty,
      extension: [{ url: 'code', valueCode: p.code }, ...(p.uri ? [{ url: 'uri', valueUri: p.uri }] : [])],
    }));
  }
}

/** A designation the display may be chosen from. */
interface Candidate {
  language?: string;
  tag?: LanguageTag;
  use?: Coding;
  value: string;
  extension?: Extension[];
  active: boolean;
}

const tagCache = new Map<string, LanguageTag>();
function tagOf(language: string | undefined): LanguageTag | undefined {
  if (!language) return undefined;
  let t = tagCache.get(language);
  if (!t) {
    if (tagCache.size > 1000) tagCache.clear();
    tagCache.set(language, (t = parseTag(language)));
  }
  return t;
}

function isActive(d: Designation): boolean {
  const status = extensionValue(d.extension, EXT.standardsStatus);
  return status !== 'withdrawn' && status !== 'inactive';
}

function isDisplayUse(use: Coding | undefined): boolean {
  if (!use) return true;
  if (use.system === DISPLAY_USE.system && use.code === DISPLAY_USE.code) return true;
  if (use.system === SNOMED && use.code === SNOMED_PREFERRED) return true;
  return use.system === DESIGNATION_USAGE && use.code === 'display';
}

function isPreferredUse(use: Coding | undefined): boolean {
  return isDisplayUse(use) || (use?.system === SNOMED && use.code === SNOMED_SYNONYM);
}

/** The designations a concept's display is chosen from: the value set's display, the code system's display,
 * its designations, those of supplements, then the value set's designations. Designations without a language
 * are in the language of the resource that gives them. */
function candidates(
  src: CodeSystemIndex,
  ord: number,
  ov: EntryOverride | undefined,
  s: OutputSettings,
): Candidate[] {
  const out: Candidate[] = [];
  const csLang = src.meta.language;
  const vsLang = s.vsLanguage ?? csLang;
  const push = (d: Designation, base: string | undefined): void => {
    if (!d.value) return;
    const language = d.language ?? base;
    out.push({
      language: d.language,
      tag: tagOf(language),
      use: d.use,
      value: d.value,
      extension: d.extension,
      active: isActive(d),
    });
  };
  if (ov?.display) push({ language: vsLang, use: DISPLAY_USE, value: ov.display }, vsLang);
  const display = src.display(ord);
  if (display) push({ language: csLang, use: DISPLAY_USE, value: display }, csLang);
  for (const d of src.designationsOf(ord)) push(d, csLang);
  const code = s.supplements.size > 0 ? src.code(ord) : '';
  for (const sup of s.supplements.size > 0 ? s.supplements.of(src.url) : []) {
    const o = sup.ordinalOf(code);
    if (o < 0) continue;
    if (sup.display(o))
      push({ language: sup.meta.language, use: DISPLAY_USE, value: sup.display(o)! }, sup.meta.language);
    for (const d of sup.designationsOf(o)) push(d, sup.meta.language ?? csLang);
  }
  for (const d of ov?.designations ?? []) push(d, vsLang);
  return out;
}

/** The displays a concept may be given by ($validate-code): its display, its designations for a display use (or
 * none), and those of supplements, each with its language (a designation without one is in the code system's). */
export function displayChoices(
  src: CodeSystemIndex,
  ord: number,
  supplements: SupplementSet,
): Array<{ value: string; language?: string; active: boolean }> {
  const s: OutputSettings = { includeDesignations: false, properties: [], supplements };
  // A designation for another use (an old spelling, an abbreviation, a fully specified name) is no display.
  return candidates(src, ord, undefined, s)
    .filter((c) => isPreferredUse(c.use))
    .map((c) => ({
      value: c.value,
      language: c.language ?? src.meta.language,
      active: c.active,
    }));
}

const DEPTHS: readonly MatchDepth[] = ['full', 'region', 'language'];

/** The designation to display: for each requested language (best first), active ones first, the closest
 * language match first, preferred (then display, then any) use first; without languages, the first preferred
 * active designation (the display). */
function preferred(cands: Candidate[], langs: LanguageRange[] | undefined): Candidate | undefined {
  if (cands.length === 0) return undefined;
  if (!langs || langs.length === 0) {
    return (
      cands.find((c) => isPreferredUse(c.use) && c.active) ??
      cands.find((c) => isDisplayUse(c.use) && c.active) ??
      cands.find((c) => isDisplayUse(c.use)) ??
      cands.find((c) => isPreferredUse(c.use)) ??
      cands[0]
    );
  }
  for (const lang of langs) {
    if (lang.quality <= 0) continue;
    for (const activeOnly of [true, false]) {
      for (const depth of DEPTHS) {
        const ok = (c: Candidate): boolean => rangeMatches(lang, c.tag, depth) && (!activeOnly || c.active);
        const hit =
          cands.find((c) => ok(c) && isPreferredUse(c.use)) ??
          cands.find((c) => ok(c) && isDisplayUse(c.use)) ??
          cands.find(ok);
        if (hit) return hit;
      }
    }
  }
  return cands.find((c) => !c.tag && isDisplayUse(c.use));
}

/** The display of a concept in an expansion (also used to rank filter matches). */
export function displayOf(
  src: CodeSystemIndex,
  ord: number,
  ov: EntryOverride | undefined,
  s: OutputSettings,
): string | undefined {
  if (!s.langs && s.supplements.size === 0) return ov?.display ?? src.display(ord);
  return preferred(candidates(src, ord, ov, s), s.langs)?.value;
}

function passesDesignationFilter(c: Candidate, filters: readonly string[] | undefined): boolean {
  if (!filters || filters.length === 0) return true;
  for (const f of filters) {
    const bar = f.indexOf('|');
    const system = f.slice(0, bar);
    const code = f.slice(bar + 1);
    if (c.use && c.use.system === system && c.use.code === code) return true;
    if (system === BCP47 && c.language === code) return true;
  }
  return false;
}

const SINGLE_VALUED: ReadonlySet<string> = new Set(['status', 'label', 'order', 'weight', 'definition']);

/** The properties of one entry: single-valued ones (status, label, order, weight) replace, others collect. */
class EntryProperties {
  private readonly values = new Map<string, Array<Record<string, unknown>>>();
  constructor(private readonly decl: PropertyDeclarations) {}

  set(code: string, uri: string | undefined, value: Record<string, unknown>): void {
    this.values.set(this.decl.declare(code, uri), [value]);
  }

  add(code: string, uri: string | undefined, value: Record<string, unknown>): void {
    // A property that has one value per concept keeps the one it has (status from a standards-status extension).
    if (SINGLE_VALUED.has(code) && this.values.has(code)) return;
    const c = this.decl.declare(code, uri);
    const list = this.values.get(c) ?? [];
    const key = JSON.stringify(value);
    if (!list.some((v) => JSON.stringify(v) === key)) list.push(value);
    this.values.set(c, list);
  }

  toExtensions(): Extension[] {
    const out: Extension[] = [];
    for (const [code, list] of this.values) {
      for (const v of list) {
        out.push({
          url: EXT.containsProperty,
          extension: [
            { url: 'code', valueCode: code },
            { url: 'value', ...v },
          ],
        });
      }
    }
    return out;
  }
}

function valueOf(p: ConceptProperty): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(p))
    if (k.startsWith('value')) out[k] = (p as unknown as Record<string, unknown>)[k];
  return out;
}

const wantedCache = new WeakMap<readonly string[], ReadonlySet<string>>();
/** The `property` list as a set (once per expansion: the list object is the expansion's). */
function wantedProperties(list: readonly string[]): ReadonlySet<string> {
  let set = wantedCache.get(list);
  if (!set) wantedCache.set(list, (set = new Set(list)));
  return set;
}

function propertyUri(index: CodeSystemIndex, code: string): string | undefined {
  return index.meta.properties?.find((p) => p.code === code)?.uri;
}

/** Looks up, once per expansion, where each source's concept details are (in memory or loaded). */
export function prepareSources(m: Membership, s: OutputSettings): void {
  let out: OutputSettings['bySource'];
  for (let i = 0; i < m.sources.length; i++) {
    const d = inMemoryDetails(m.sources[i]) ?? s.loaded?.get(m.sources[i]);
    if (d) (out ??= new Array(m.sources.length))[i] = d;
  }
  s.bySource = out;
}

/** True when no entry of the request needs more than code, display and flags (no languages, designations,
 * supplements, properties or loaded concept details): then plainEntry answers most entries. */
export function plainSettings(s: OutputSettings): boolean {
  return (
    !s.includeDesignations && !s.langs && s.supplements.size === 0 && s.properties.length === 0 && !s.bySource
  );
}

/**
 * The entry of a concept under plain settings (plainSettings), or undefined when it needs buildEntry (it is
 * inactive, has a status, or the value set gives it extensions). Small enough to be inlined in the page loop:
 * the hot path (a filtered page of a large code system) pays nothing for what it does not ask for.
 */
export function plainEntry(m: Membership, pos: number, showVersion: boolean): ValueSetContains | undefined {
  const src = m.sources[m.entSrc[pos]];
  const ord = m.entOrd[pos];
  const flags = m.entFlags[pos];
  if ((flags & FLAG_INACTIVE) !== 0 || (src.statuses.size > 0 && src.statuses.has(ord))) return undefined;
  const ov = m.overrides.size > 0 ? m.overrides.get(pos) : undefined;
  if (ov?.extension) return undefined;
  const e: ValueSetContains = { system: src.url };
  if ((flags & FLAG_ABSTRACT) !== 0) e.abstract = true;
  if (showVersion && src.version !== undefined) e.version = src.version;
  e.code = src.code(ord);
  const display = ov?.display ?? src.display(ord);
  if (display !== undefined) e.display = display;
  return e;
}

/** The expansion entry of position `pos` of a membership. */
export function buildEntry(
  m: Membership,
  pos: number,
  s: OutputSettings,
  decl: PropertyDeclarations,
  showVersion: boolean,
): ValueSetContains {
  const src = m.sources[m.entSrc[pos]];
  const ord = m.entOrd[pos];
  const flags = m.entFlags[pos];
  const ov = m.overrides.size > 0 ? m.overrides.get(pos) : undefined;
  const e: ValueSetContains = { system: src.url };
  if ((flags & FLAG_ABSTRACT) !== 0) e.abstract = true;
  if ((flags & FLAG_INACTIVE) !== 0) e.inactive = true;
  if (showVersion && src.version !== undefined) e.version = src.version;
  const code = src.code(ord);
  e.code = code;

  if (!s.includeDesignations && !s.langs && s.supplements.size === 0) {
    const display = ov?.display ?? src.display(ord);
    if (display !== undefined) e.display = display;
  } else {
    const cands = candidates(src, ord, ov, s);
    const pref = preferred(cands, s.langs);
    if (pref) e.display = pref.value;
    if (s.includeDesignations) {
      const list: Designation[] = [];
      for (const c of cands) {
        if (c === pref || !passesDesignationFilter(c, s.designations)) continue;
        // The display itself, repeated without a language of its own, says nothing new.
        const redundant =
          c.language === undefined && !s.vsLanguage && isDisplayUse(c.use) && c.value === e.display;
        if (redundant) continue;
        const d: Designation = { value: c.value };
        if (c.language) d.language = c.language;
        if (c.use) d.use = c.use;
        const ext = c.extension?.filter((x) => ECHOED_DESIGNATION_EXTENSIONS.has(x.url));
        if (ext && ext.length > 0) d.extension = ext;
        list.push(d);
      }
      if (list.length > 0) e.designation = list;
    }
  }

  // Properties and carried-over extensions: cheap to skip for the common concept that has none.
  const status = src.statuses.size > 0 ? src.statuses.get(ord) : undefined;
  const details = s.bySource ? s.bySource[m.entSrc[pos]]?.get(ord) : undefined;
  const supps = s.supplements.size > 0 ? s.supplements.of(src.url) : undefined;
  if (
    status === undefined &&
    (flags & FLAG_INACTIVE) === 0 &&
    !details &&
    !ov?.extension &&
    s.properties.length === 0 &&
    !supps?.length
  )
    return e;

  const props = new EntryProperties(decl);
  const extensions: Extension[] = [];
  if (status !== undefined && status !== 'active') {
    props.set('status', `${CONCEPT_PROPERTY}status`, { valueCode: status });
  } else if (status === undefined && (flags & FLAG_INACTIVE) !== 0) {
    props.set('status', `${CONCEPT_PROPERTY}status`, { valueCode: 'inactive' });
  }
  // Code system (and supplement) concept extensions.
  const csExt: Extension[] = [...(details?.extension ?? [])];
  const suppProps: Array<{ index: CodeSystemIndex; props: ConceptProperty[] }> = [];
  for (const sup of supps ?? []) {
    const o = sup.ordinalOf(code);
    if (o < 0) continue;
    csExt.push(...((inMemoryDetails(sup) ?? s.loaded?.get(sup))?.get(o)?.extension ?? []));
    const p = sup.propertiesOf(o);
    if (p.length > 0) suppProps.push({ index: sup, props: p });
  }
  derivedProperties(props, csExt, EXT.label, EXT.conceptOrder);
  for (const x of csExt) {
    if (ECHOED_CS_EXTENSIONS.has(x.url)) extensions.push(x);
    else if (x.url === EXT.standardsStatus && typeof x.valueCode === 'string')
      props.set('status', `${CONCEPT_PROPERTY}status`, { valueCode: x.valueCode });
  }
  // Value set concept extensions (they win over the code system's).
  if (ov?.extension) {
    derivedProperties(props, ov.extension, EXT.vsLabel, EXT.vsConceptOrder);
    for (const x of ov.extension) if (ECHOED_VS_EXTENSIONS.has(x.url)) extensions.push(x);
  }
  // Properties asked for: one pass over the concept's properties (the list asked for may be long).
  if (s.properties.length > 0) {
    const wanted = wantedProperties(s.properties);
    if (wanted.has('definition') && details?.definition !== undefined) {
      props.set('definition', `${CONCEPT_PROPERTY}definition`, { valueString: details.definition });
    }
    const all = wanted.has('*');
    for (const { index, props: list } of [{ index: src, props: src.propertiesOf(ord) }, ...suppProps]) {
      for (const p of list) {
        const uri = propertyUri(index, p.code);
        if (all || wanted.has(p.code) || (uri !== undefined && wanted.has(uri)))
          props.add(p.code, uri, valueOf(p));
      }
    }
  }
  const all = [...extensions, ...props.toExtensions()];
  if (all.length > 0) e.extension = all;
  return e;
}

/** label, order and weight from a list of extensions (the code system's or the value set's names for them). */
function derivedProperties(
  props: EntryProperties,
  ext: Extension[],
  labelUrl: string,
  orderUrl: string,
): void {
  const label = extensionValue(ext, labelUrl);
  if (typeof label === 'string') props.set('label', `${CONCEPT_PROPERTY}label`, { valueString: label });
  const order = extensionValue(ext, orderUrl);
  if (typeof order === 'number') props.set('order', `${CONCEPT_PROPERTY}order`, { valueDecimal: order });
  const weight = extensionValue(ext, EXT.itemWeight);
  if (typeof weight === 'number')
    props.set('weight', `${CONCEPT_PROPERTY}itemWeight`, { valueDecimal: weight });
}
