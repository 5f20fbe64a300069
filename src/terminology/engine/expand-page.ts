// The page stage of $expand: entries offset..end of the selection (the offset and count parameters), and the
// details (definitions, extensions) their entries show that their code systems do not hold in memory (stored ones),
// which the resolver loads for the page only.
import type { CodeSystemIndex } from './code-system-index.js';
import { inMemoryDetails, type ConceptDetails } from './concept-details.js';
import type { OutputSettings } from './entries.js';
import type { ExpansionPlan } from './expand-prepare.js';
import type { Selection } from './expand-select.js';
import type { Membership } from './membership.js';
import type { Resolver } from './resolver.js';

/** The entries of a page: positions[offset..end), or the positions offset..end themselves when unfiltered. */
export interface Page {
  readonly positions: Int32Array | undefined;
  readonly offset: number;
  readonly end: number;
  /** How many entries the expansion has in all (ValueSet.expansion.total). */
  readonly total: number;
}

/** The page of the selection the plan's offset and count ask for (indexed in place: no array of it). */
export function pageOf(plan: ExpansionPlan, s: Selection): Page {
  const offset = plan.req.offset ?? 0;
  const count = plan.req.count;
  const end = Math.min(
    count === undefined ? s.total : Math.min(s.total, offset + count),
    s.positions ? (s.filtered ? s.positions.length : s.total) : s.total,
  );
  return { positions: s.positions, offset, end, total: s.total };
}

/** The details (definitions, extensions) of the page's concepts whose code systems do not hold them in memory
 * (stored ones), and of their supplements' concepts, from the resolver: when the request asks for properties, or
 * the code system has concept extensions. */
export function detailsWanted(
  m: Membership,
  page: Page,
  resolver: Resolver,
  s: OutputSettings,
): Map<CodeSystemIndex, number[]> | undefined {
  const anyProperty = s.properties.length > 0;
  // Usually nothing to load: no property asked for, no supplement, no source with concept extensions.
  if (!anyProperty && s.supplements.size === 0) {
    let ext = false;
    for (const src of m.sources)
      if (!inMemoryDetails(src) && resolver.hasConceptExtensions?.(src)) ext = true;
    if (!ext) return undefined;
  }
  const wanted = new Map<CodeSystemIndex, number[]>();
  const want = (index: CodeSystemIndex, ord: number, always: boolean): void => {
    if (inMemoryDetails(index) || !(always || resolver.hasConceptExtensions?.(index))) return;
    const list = wanted.get(index) ?? [];
    list.push(ord);
    wanted.set(index, list);
  };
  for (let i = page.offset; i < page.end; i++) {
    const pos = page.positions ? page.positions[i] : i;
    const src = m.sources[m.entSrc[pos]];
    want(src, m.entOrd[pos], anyProperty);
    if (s.supplements.size === 0) continue;
    for (const sup of s.supplements.of(src.url)) {
      const o = sup.ordinalOf(src.code(m.entOrd[pos]));
      if (o >= 0) want(sup, o, false);
    }
  }
  return wanted.size > 0 ? wanted : undefined;
}

/** The details detailsWanted found wanting, from the resolver (which has conceptDetails, or none are wanted). */
export async function loadDetails(
  wanted: Map<CodeSystemIndex, number[]>,
  resolver: Resolver,
): Promise<Map<CodeSystemIndex, Map<number, ConceptDetails>>> {
  const out = new Map<CodeSystemIndex, Map<number, ConceptDetails>>();
  for (const [src, ords] of wanted) out.set(src, await resolver.conceptDetails!(src, ords));
  return out;
}
