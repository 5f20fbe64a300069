// Code system versions in $expand: wildcard versions (`1.x.x`, `1.0.x`, `1.*`) in `include.version`,
// `system-version`, `force-system-version` and `check-system-version`, resolved to the highest matching version.
import type { CodeSystemIndex } from './code-system-index.js';
import type { Resolver } from './resolver.js';

/** Is this version a pattern (some dot-separated part is `x`, `X` or `*`)? */
export function isVersionPattern(v: string): boolean {
  return v.split('.').some(isWild);
}

function isWild(part: string): boolean {
  return part === 'x' || part === 'X' || part === '*';
}

/** Does a version match a pattern? Parts compare one by one, a wildcard part matching any; a pattern ending in a
 * wildcard also matches further parts (`1.x` matches `1.0.0`). A plain version matches only itself. */
export function versionMatches(version: string, pattern: string): boolean {
  if (version === pattern) return true;
  const p = pattern.split('.');
  const v = version.split('.');
  if (!p.some(isWild)) return false;
  const openEnded = isWild(p[p.length - 1]);
  if (v.length < p.length || (!openEnded && v.length !== p.length)) return false;
  for (let i = 0; i < p.length; i++) if (!isWild(p[i]) && p[i] !== v[i]) return false;
  return true;
}

/** Highest first: parts compared numerically where both are numbers. */
export function compareVersionsDesc(a: string, b: string): number {
  return b.localeCompare(a, 'en', { numeric: true });
}

/** The index of a code system at a version, which may be a pattern (its highest matching version). Patterns need
 * the resolver's version list; without one a pattern matches nothing. */
export async function resolveCodeSystem(
  resolver: Resolver,
  url: string,
  version: string | undefined,
): Promise<CodeSystemIndex | undefined> {
  if (version === undefined || !isVersionPattern(version)) return resolver.codeSystem(url, version);
  const versions = (await resolver.codeSystemVersions?.(url)) ?? [];
  const best = versions.filter((v) => versionMatches(v, version)).sort(compareVersionsDesc)[0];
  return best === undefined ? undefined : resolver.codeSystem(url, best);
}
