// Code system supplements (content `supplement`): designations, properties and extensions that add to another
// code system's concepts, asked for by `useSupplement` or a value set's `valueset-supplement` extension. A
// supplement asked for must exist and must be used (its code system must be in the expansion): else the request
// fails, as the terminology ecosystem IG requires ("servers SHALL not ignore supplements").
import type { CodeSystemIndex } from './code-system-index.js';
import { TerminologyError } from './errors.js';
import type { Resolver } from './resolver.js';

/** The supplements of one expansion, by the url of the code system they supplement. */
export class SupplementSet {
  private readonly byBase = new Map<string, CodeSystemIndex[]>();
  /** `url|version` of the supplements whose code system the expansion used. */
  readonly used = new Set<string>();
  private readonly wanted: Array<{ canonical: string; index: CodeSystemIndex }> = [];

  get size(): number {
    return this.wanted.length;
  }

  /** The supplements of a code system (none: an empty array). */
  of(url: string): readonly CodeSystemIndex[] {
    return this.byBase.get(url) ?? NONE;
  }

  add(canonical: string, index: CodeSystemIndex): void {
    const base = (index.meta.supplements ?? '').split('|')[0];
    const list = this.byBase.get(base) ?? [];
    if (!list.includes(index)) list.push(index);
    this.byBase.set(base, list);
    this.wanted.push({ canonical, index });
  }

  /** Marks the supplements of the code systems an expansion used; throws for one asked for and not used. */
  settle(usedSystems: Iterable<string>): void {
    if (this.wanted.length === 0) return;
    const urls = new Set<string>();
    for (const u of usedSystems) urls.add(u.split('|')[0]);
    const missing: string[] = [];
    for (const w of this.wanted) {
      const base = (w.index.meta.supplements ?? '').split('|')[0];
      if (urls.has(base)) this.used.add(w.index.version ? `${w.index.url}|${w.index.version}` : w.index.url);
      else missing.push(w.canonical);
    }
    if (missing.length > 0) throw supplementMissing(missing);
  }
}

const NONE: readonly CodeSystemIndex[] = [];

/** The error for supplements that are asked for and cannot be applied. */
function supplementMissing(canonicals: string[]): TerminologyError {
  const err = new TerminologyError(
    422,
    'not-found',
    `Required supplement${canonicals.length > 1 ? 's' : ''} not found: ${canonicals.join(',')}`,
  );
  err.txIssueType = 'not-found';
  return err;
}

/** Looks up the supplements asked for (canonical `url` or `url|version`); one that is not a supplement, or is
 * not there, is an error. */
export async function resolveSupplements(
  canonicals: readonly string[],
  resolver: Resolver,
): Promise<SupplementSet> {
  const set = new SupplementSet();
  const missing: string[] = [];
  for (const c of new Set(canonicals)) {
    const bar = c.indexOf('|');
    const url = bar < 0 ? c : c.slice(0, bar);
    const version = bar < 0 || bar === c.length - 1 ? undefined : c.slice(bar + 1);
    const index = url ? await resolver.codeSystem(url, version) : undefined;
    if (!index || index.meta.content !== 'supplement' || !index.meta.supplements) missing.push(c);
    else set.add(c, index);
  }
  if (missing.length > 0) throw supplementMissing(missing);
  return set;
}

/** An empty set (no supplements asked for): shared, never written to. */
export const NO_SUPPLEMENTS = new SupplementSet();
