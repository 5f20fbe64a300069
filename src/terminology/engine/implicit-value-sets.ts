// Implicit value sets (FHIR R4 terminologies-systems: SNOMED CT and LOINC): value set canonicals no resource holds,
// defined by their url. Each is synthesised as a ValueSet with a compose over the code system, so that expansion,
// validation, caching, paging and `used-codesystem` take the ordinary path.
//   http://snomed.info/sct?fhir_vs                 every concept
//   http://snomed.info/sct?fhir_vs=isa/<sctid>      the concept and its descendants
//   http://snomed.info/sct?fhir_vs=refset           the reference sets that have members
//   http://snomed.info/sct?fhir_vs=refset/<sctid>   the members of a reference set
//   http://snomed.info/sct?fhir_vs=ecl/<ECL>        the concepts an ECL expression selects (url-encoded)
//   http://snomed.info/sct/<module>[/version/<date>]?fhir_vs...  the same in that edition (its latest version)
//   http://loinc.org/vs                             every LOINC code
import { parseEcl, relationsReady } from './ecl/index.js';
import { invalid, TerminologyError } from './errors.js';
import type { Resolver } from './resolver.js';
import type { ValueSetFilter, ValueSetInclude, ValueSetResource } from './types.js';
import { compareVersionsDesc, resolveCodeSystem } from './versions.js';

export const SNOMED_CT = 'http://snomed.info/sct';
const LOINC = 'http://loinc.org';
const SNOMED_URL =
  /^http:\/\/snomed\.info\/sct(?:\/([0-9]{1,18})(?:\/version\/([0-9]{8}))?)?\?fhir_vs(?:=(.*))?$/s;
/** Selects nothing (an include must select something explicit: no filter would mean the whole system). */
const NOTHING = '* MINUS *';

/** Is this url one of the implicit value set forms? (Cheap: no lookup.) */
export function isImplicitValueSetUrl(url: string): boolean {
  return url === `${LOINC}/vs` || (url.startsWith(SNOMED_CT) && url.includes('?fhir_vs'));
}

/** The value set an implicit url defines, or undefined when the url is not of an implicit form. A bad form
 * (`?fhir_vs=foo`) is a 400; a code system version nobody has is left to the expansion (422 not-found). */
export async function implicitValueSet(
  url: string,
  resolver: Resolver,
): Promise<ValueSetResource | undefined> {
  if (url === `${LOINC}/vs`) return valueSetOf(url, { system: LOINC });
  if (!isImplicitValueSetUrl(url)) return undefined;
  const m = SNOMED_URL.exec(url);
  if (!m) throw invalid(`Malformed SNOMED CT implicit value set url '${url.slice(0, 200)}'`, ['url']);
  const [, module, date, what] = m;
  let version: string | undefined;
  if (module !== undefined && date !== undefined) version = `${SNOMED_CT}/${module}/version/${date}`;
  else if (module !== undefined) {
    // An edition without a date: its latest version (none: the edition itself, which no code system has).
    const prefix = `${SNOMED_CT}/${module}/version/`;
    const versions = ((await resolver.codeSystemVersions?.(SNOMED_CT)) ?? []).filter((v) =>
      v.startsWith(prefix),
    );
    version = versions.sort(compareVersionsDesc)[0] ?? `${SNOMED_CT}/${module}`;
  }
  const include: ValueSetInclude = { system: SNOMED_CT };
  if (version !== undefined) include.version = version;
  const filter = (f: ValueSetFilter): ValueSetResource =>
    valueSetOf(url, { ...include, filter: [f] }, version);
  if (what === undefined || what === '') return valueSetOf(url, include, version);
  if (what.startsWith('isa/')) {
    const code = what.slice(4);
    if (!/^[0-9]{1,18}$/.test(code))
      throw invalid(`'${what.slice(0, 100)}' is not isa/<concept id>`, ['url']);
    return filter({ property: 'concept', op: 'is-a', value: code });
  }
  if (what.startsWith('refset/')) {
    const code = what.slice(7);
    if (!/^[0-9]{1,18}$/.test(code))
      throw invalid(`'${what.slice(0, 100)}' is not refset/<reference set id>`, ['url']);
    return filter({ property: 'concept', op: 'in', value: code });
  }
  if (what === 'refset') {
    // The reference sets with members in that version, listed (the code system decides the list; none: empty).
    const index = await resolveCodeSystem(resolver, SNOMED_CT, version);
    const refsets = index
      ? [...(await relationsReady(index)).refsetMembers.keys()].sort((a, b) => a - b)
      : [];
    if (refsets.length === 0) return filter({ property: 'constraint', op: '=', value: NOTHING });
    return valueSetOf(url, { ...include, concept: refsets.map((o) => ({ code: index!.code(o) })) }, version);
  }
  if (what.startsWith('ecl/')) {
    let ecl = what.slice(4);
    try {
      ecl = decodeURIComponent(ecl);
    } catch {
      // Not url-encoded (a client that sent it as it is): used as given.
    }
    // Read now, so that a syntax error names the url (the position is in the ECL); evaluated with the compose.
    try {
      parseEcl(ecl, 'url');
    } catch (err) {
      if (err instanceof TerminologyError) err.message = `ECL of the implicit value set url: ${err.message}`;
      throw err;
    }
    return filter({ property: 'constraint', op: '=', value: ecl });
  }
  throw invalid(
    `Unknown SNOMED CT implicit value set '?fhir_vs=${what.slice(0, 100)}' (known: isa/<id>, refset, refset/<id>, ecl/<ECL>)`,
    ['url'],
  );
}

function valueSetOf(url: string, include: ValueSetInclude, version?: string): ValueSetResource {
  const vs: ValueSetResource = {
    resourceType: 'ValueSet',
    url,
    status: 'active',
    compose: { include: [include] },
  };
  if (version !== undefined) vs.version = version;
  return vs;
}
