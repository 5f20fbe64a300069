// ConceptMap/$translate (R4, with the R5 parameter names the HL7 test suite sends): the matches of one code in the
// given concept maps, forward (source -> target) or reverse (a target code back to its sources). Pure: the caller
// finds the maps (tx-resource, the project's, the shared ones) and bounds their size.
import { TerminologyError } from './errors.js';

/** A ConceptMap's target entry (R4 `equivalence`; R5 `relationship` also read). */
interface MapTarget {
  code?: string;
  display?: string;
  equivalence?: string;
  relationship?: string;
}

/** A ConceptMap group, as $translate reads it. */
interface MapGroup {
  source?: string;
  sourceVersion?: string;
  target?: string;
  targetVersion?: string;
  element?: Array<{ code?: string; display?: string; target?: MapTarget[] }>;
  unmapped?: { mode?: string; code?: string; display?: string };
}

/** A ConceptMap, as $translate reads it. */
export interface ConceptMapResource {
  resourceType: 'ConceptMap';
  url?: string;
  version?: string;
  group?: MapGroup[];
  [key: string]: unknown;
}

/** What to translate, in R4 terms (the service folds the R5 names into these). */
export interface TranslateRequest {
  code: string;
  system: string;
  /** Reverse: `code`/`system` are a target; the matches are its sources. */
  reverse: boolean;
  /** Forward: only groups into this system; reverse: only groups from it. */
  otherSystem?: string;
}

/** R4 equivalence -> R5 relationship (ConceptMap40_50). */
const RELATIONSHIP: Readonly<Record<string, string>> = {
  relatedto: 'related-to',
  equivalent: 'equivalent',
  equal: 'equivalent',
  wider: 'source-is-narrower-than-target',
  subsumes: 'source-is-narrower-than-target',
  narrower: 'source-is-broader-than-target',
  specializes: 'source-is-broader-than-target',
  inexact: 'related-to',
  unmatched: 'not-related-to',
  disjoint: 'not-related-to',
};

/** R5 relationship -> R4 equivalence (for maps written with R5 names). */
const EQUIVALENCE: Readonly<Record<string, string>> = {
  'related-to': 'relatedto',
  equivalent: 'equivalent',
  'source-is-narrower-than-target': 'wider',
  'source-is-broader-than-target': 'narrower',
  'not-related-to': 'disjoint',
};

/** Equivalences that say the codes do not map: such a match is listed, but is no translation. */
const NO_MAPPING = new Set(['unmatched', 'disjoint']);

type Part = Record<string, unknown> & { name: string };

const coding = (system: string | undefined, code: string, version?: string, display?: string) => ({
  ...(system !== undefined ? { system } : {}),
  ...(version !== undefined ? { version } : {}),
  code,
  ...(display !== undefined ? { display } : {}),
});

/** The canonical of a map (url|version). */
const canonical = (m: ConceptMapResource) => (m.version ? `${m.url ?? ''}|${m.version}` : (m.url ?? ''));

/** One match's parts: the R4 equivalence, the R5 relationship, the concept, the map it came from. */
function match(equivalence: string, concept: object, map: ConceptMapResource, source?: object): Part {
  const part: Part[] = [
    { name: 'equivalence', valueCode: equivalence },
    { name: 'relationship', valueCode: RELATIONSHIP[equivalence] ?? 'related-to' },
    { name: 'concept', valueCoding: concept },
    { name: 'originMap', valueCanonical: canonical(map) },
  ];
  if (source) part.push({ name: 'source', valueCoding: source });
  return { name: 'match', part };
}

const equivalenceOf = (t: MapTarget): string =>
  t.equivalence ?? (t.relationship ? (EQUIVALENCE[t.relationship] ?? 'relatedto') : 'relatedto');

/** Translates a code with the given maps (in order): a Parameters resource (result, message, match). */
export function translateCode(
  maps: readonly ConceptMapResource[],
  req: TranslateRequest,
): Record<string, unknown> {
  if (!req.code)
    throw new TerminologyError(
      400,
      'invalid',
      'A code to translate is required (code, coding, sourceCode or targetCode)',
      ['code'],
    );
  const matches: Part[] = [];
  for (const map of maps) {
    for (const g of map.group ?? []) {
      if (!req.reverse) {
        if (g.source !== req.system || (req.otherSystem !== undefined && g.target !== req.otherSystem))
          continue;
        const elements = (g.element ?? []).filter((e) => e.code === req.code);
        for (const e of elements)
          for (const t of e.target ?? [])
            if (t.code)
              matches.push(
                match(equivalenceOf(t), coding(g.target, t.code, g.targetVersion, t.display), map),
              );
        if (elements.length === 0 && g.unmapped) {
          // Unmapped codes: the same code in the target system (provided), or one fixed code.
          const code =
            g.unmapped.mode === 'provided'
              ? req.code
              : g.unmapped.mode === 'fixed'
                ? g.unmapped.code
                : undefined;
          if (code)
            matches.push(match('inexact', coding(g.target, code, g.targetVersion, g.unmapped.display), map));
        }
      } else {
        if (g.target !== req.system || (req.otherSystem !== undefined && g.source !== req.otherSystem))
          continue;
        for (const e of g.element ?? [])
          for (const t of e.target ?? [])
            if (t.code === req.code && e.code)
              matches.push(
                match(
                  equivalenceOf(t),
                  coding(g.target, t.code, g.targetVersion, t.display),
                  map,
                  coding(g.source, e.code, g.sourceVersion, e.display),
                ),
              );
      }
    }
  }
  const found = matches.some((m) => {
    const eq = (m.part as Part[]).find((p) => p.name === 'equivalence')?.valueCode as string;
    return !NO_MAPPING.has(eq);
  });
  const parameter: Part[] = [{ name: 'result', valueBoolean: found }];
  if (!found)
    parameter.push({
      name: 'message',
      valueString:
        maps.length === 0
          ? `No ConceptMap found to translate ${req.system}#${req.code}`
          : `No translation found for ${req.system}#${req.code} in ${maps.map(canonical).join(', ')}`,
    });
  return { resourceType: 'Parameters', parameter: [...parameter, ...matches] };
}

/** Entries (elements and their targets) of a ConceptMap, counted up to `max + 1`: what one translation may walk. */
export function countMapEntries(map: Record<string, unknown>, max: number): number {
  let n = 0;
  for (const g of Array.isArray(map.group) ? (map.group as MapGroup[]) : []) {
    for (const e of Array.isArray(g?.element) ? g.element : []) {
      n += 1 + (Array.isArray(e?.target) ? e.target.length : 0);
      if (n > max) return n;
    }
  }
  return n;
}
