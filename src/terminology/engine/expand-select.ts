// The select stage of $expand: the entries of the membership the expansion has, in its order. A filter ranks its
// matches (ranking.ts; the result is cached per membership, filter and what decides the displays); activeOnly and
// excludeNotForUI leave out flagged entries; without either, every entry in the membership's order. An unpaged
// expansion larger than EXPAND_MAX_UNPAGED is refused here, once its exact total is known.
import { TerminologyError } from './errors.js';
import type { ExpansionPlan } from './expand-prepare.js';
import type { Membership } from './membership.js';
import { filterPage } from './ranking.js';
import type { ValueSetResource } from './types.js';

/** The entries selected. */
export interface Selection {
  /** Their positions in the membership, in order; undefined: every entry, positions 0..total. */
  readonly positions: Int32Array | undefined;
  /** How many there are (exact, even when a filter ranked only those up to the page's end). */
  readonly total: number;
  /** A filter selected them: positions may hold only the ranked ones up to the page's end. */
  readonly filtered: boolean;
}

/** The entries of membership `m` the plan selects; 422 too-costly for an unpaged expansion past the limit. */
export function select(plan: ExpansionPlan, m: Membership): Selection {
  const { req, filter, excludeMask, settings } = plan;
  let positions: Int32Array | undefined;
  let filteredTotal = -1;
  if (filter) {
    // Only the entries up to the page's end are ranked (the total is exact either way).
    const need = req.count === undefined ? Infinity : (req.offset ?? 0) + req.count;
    const key =
      plan.supplementCanonicals.length === 0 && req.displayLanguage === undefined
        ? `${excludeMask}\u0000${filter.raw}`
        : `${excludeMask}\u0000${req.displayLanguage ?? ''}\u0000${plan.supplementCanonicals.join(' ')}\u0000${filter.raw}`;
    let found = m.cachedFilter(key);
    if (!found || (!found.complete && found.positions.length < need)) {
      // A display chosen by language or from supplements may differ from the index's display.
      const chooser = settings.langs !== undefined || settings.supplements.size > 0 ? settings : undefined;
      found = filterPage(m, filter, excludeMask, chooser, need);
      m.storeFilter(key, found);
    }
    positions = found.positions;
    filteredTotal = found.total;
  } else if (excludeMask !== 0) {
    positions = m.positionsWithout(excludeMask);
  }
  const total = filteredTotal >= 0 ? filteredTotal : positions ? positions.length : m.size;
  if (req.count === undefined && total > plan.limits.maxUnpaged) {
    throw new TerminologyError(
      422,
      'too-costly',
      `The value set '${canonicalOf(plan.vs)}' expansion has too many codes to produce (>${plan.limits.maxUnpaged}): ` +
        `use the count and offset parameters (or a filter) to page through its ${total} entries`,
    );
  }
  return { positions, total, filtered: filteredTotal >= 0 };
}

/** The canonical of a value set (url|version) for messages. */
function canonicalOf(vs: ValueSetResource): string {
  return vs.version ? `${vs.url ?? ''}|${vs.version}` : (vs.url ?? '');
}
