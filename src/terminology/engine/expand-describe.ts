// The describe stage of $expand: the ValueSet with its expansion. The page's entries (entries.ts; nested under
// their parents for a whole hierarchical expansion, hierarchy.ts), the parameters echoed and used, warnings for
// draft/deprecated/withdrawn definitions used, the property declarations and valueset-unclosed extensions, and the
// value set's definition when includeDefinition asks for it.
import { randomUUID } from 'node:crypto';
import { EXT } from './concept-details.js';
import { buildEntry, plainEntry, plainSettings, prepareSources, PropertyDeclarations } from './entries.js';
import type { Page } from './expand-page.js';
import type { ExpansionPlan } from './expand-prepare.js';
import { statusWarnings } from './flatten.js';
import { nestEntries } from './hierarchy.js';
import { echoLanguageList } from './languages.js';
import { FLAG_SHOW_VERSION, type Membership } from './membership.js';
import type { Resolver } from './resolver.js';
import type {
  ExpandRequest,
  ExpansionParameter,
  Extension,
  ValueSetContains,
  ValueSetResource,
  ValueSetResourceWithExpansion,
} from './types.js';

/** The expanded ValueSet: `imported` are the value sets the expansion imported (importedValueSets), for warnings. */
export function describe(
  plan: ExpansionPlan,
  m: Membership,
  page: Page,
  imported: readonly ValueSetResource[],
): ValueSetResourceWithExpansion {
  const { vs, req, settings } = plan;
  prepareSources(m, settings);
  const decl = new PropertyDeclarations();
  const contains = entriesOf(plan, m, page, decl);
  const parameter = parametersOf(plan, m, imported);

  const expansion: ValueSetResourceWithExpansion['expansion'] = {
    identifier: `urn:uuid:${randomUUID()}`,
    timestamp: new Date().toISOString(),
    total: page.total,
  };
  // An expansion drawn from fragments may be incomplete (valueset-unclosed), and R4 declares the properties of
  // its entries as extensions.
  const extension: Extension[] = m.fragments.length > 0 || decl.size > 0 ? [] : NO_EXTENSIONS;
  for (const f of m.fragments) {
    if (extension.length === 0) extension.push({ url: EXT.unclosed, valueBoolean: true });
    extension.push({
      url: EXT.unclosedReason,
      valueString: `This extension is based on a fragment of the code system ${f.split('|')[0]}`,
    });
  }
  if (decl.size > 0) extension.push(...decl.toExtensions());
  if (extension.length > 0) expansion.extension = extension;
  if (req.offset !== undefined) expansion.offset = page.offset;
  if (parameter.length > 0) expansion.parameter = parameter;
  if (contains.length > 0) expansion.contains = contains;
  // The definition (compose, contained resources, the value set's extensions) only when asked
  // (includeDefinition), and not the descriptive metadata: the expansion identifies its value set, as the HL7
  // reference server answers.
  const {
    compose,
    contained,
    extension: vsExtension,
    text: _t,
    publisher: _p,
    description: _d,
    purpose: _pu,
    copyright: _c,
    contact: _co,
    ...rest
  } = vs;
  return req.includeDefinition
    ? {
        ...rest,
        ...(vsExtension ? { extension: vsExtension } : {}),
        ...(contained ? { contained } : {}),
        compose,
        expansion,
      }
    : { ...rest, expansion };
}

/** The value sets the expansion imported (for their warnings): looked up only when it imports some. */
export async function importedValueSets(m: Membership, resolver: Resolver): Promise<ValueSetResource[]> {
  const out: ValueSetResource[] = [];
  for (const u of m.usedValueSets) {
    const bar = u.indexOf('|');
    const used = await resolver.valueSet(
      bar < 0 ? u : u.slice(0, bar),
      bar < 0 ? undefined : u.slice(bar + 1),
    );
    if (used) out.push(used);
  }
  return out;
}

/** The page's entries, nested under their parents for a whole hierarchical expansion. */
function entriesOf(
  plan: ExpansionPlan,
  m: Membership,
  page: Page,
  decl: PropertyDeclarations,
): ValueSetContains[] {
  const { req, settings } = plan;
  const { positions, offset, end } = page;
  let contains: ValueSetContains[] = [];
  const plain = plainSettings(settings);
  for (let i = offset; i < end; i++) {
    const pos = positions ? positions[i] : i;
    const showVersion = (m.entFlags[pos] & FLAG_SHOW_VERSION) !== 0;
    contains.push(
      (plain ? plainEntry(m, pos, showVersion) : undefined) ??
        buildEntry(m, pos, settings, decl, showVersion),
    );
  }
  // Hierarchical unless excludeNested, and only for a whole (unpaged) expansion: a page of a tree is undefined.
  if (
    m.nest &&
    !m.flat &&
    req.excludeNested !== true &&
    req.count === undefined &&
    req.offset === undefined
  ) {
    contains = nestEntries(m, positions, contains, plan.filter !== undefined);
  }
  return contains;
}

/** ValueSet.expansion.parameter: the parameters echoed, the supplements used, then warnings for the code systems
 * and value sets used. */
function parametersOf(
  plan: ExpansionPlan,
  m: Membership,
  imported: readonly ValueSetResource[],
): ExpansionParameter[] {
  const { vs } = plan;
  const parameter = echoedParameters(plan.req, m);
  for (const u of plan.settings.supplements.used) parameter.push({ name: 'used-supplement', valueUri: u });
  // warning-* for a draft/experimental/deprecated/withdrawn code system or value set used (only looked up
  // when the expansion imports value sets; code system facts are in their index).
  for (const src of m.sources) {
    for (const w of src.meta.warnings ?? []) pushWarning(parameter, w, src.url, src.version);
  }
  // For value sets only the standards-status counts (the IG's draft value sets expand without a warning).
  for (const w of valueSetWarnings(vs)) pushWarning(parameter, w, vs.url ?? '', vs.version);
  for (const used of imported) {
    for (const w of valueSetWarnings(used)) pushWarning(parameter, w, used.url ?? '', used.version);
  }
  return parameter;
}

/** Shared by expansions without extensions; never written to. */
const NO_EXTENSIONS = [] as Extension[];

const NO_WARNINGS: readonly string[] = [];

/** A value set's deprecated/withdrawn standards-status (none for most: no extension, no allocation). */
export function valueSetWarnings(vs: ValueSetResource): readonly string[] {
  if (vs.extension === undefined) return NO_WARNINGS;
  const w = statusWarnings({ extension: vs.extension });
  return w ? w.filter((x) => x === 'deprecated' || x === 'withdrawn') : NO_WARNINGS;
}

/** Adds a `warning-<reason>` parameter for a canonical once. */
function pushWarning(
  parameter: ExpansionParameter[],
  reason: string,
  url: string,
  version: string | undefined,
): void {
  const valueUri = version ? `${url}|${version}` : url;
  const name = `warning-${reason}`;
  if (!parameter.some((p) => p.name === name && p.valueUri === valueUri)) parameter.push({ name, valueUri });
}

/** The parameters an expansion echoes: those given (and those the value set declared), then what was used. */
function echoedParameters(req: ExpandRequest, m: Membership): ExpansionParameter[] {
  const parameter: ExpansionParameter[] = [];
  if (req.filter !== undefined) parameter.push({ name: 'filter', valueString: req.filter });
  if (req.offset !== undefined) parameter.push({ name: 'offset', valueInteger: req.offset });
  if (req.count !== undefined) parameter.push({ name: 'count', valueInteger: req.count });
  if (req.activeOnly !== undefined) parameter.push({ name: 'activeOnly', valueBoolean: req.activeOnly });
  if (req.includeDesignations !== undefined) {
    parameter.push({ name: 'includeDesignations', valueBoolean: req.includeDesignations });
  }
  if (req.includeDefinition !== undefined) {
    parameter.push({ name: 'includeDefinition', valueBoolean: req.includeDefinition });
  }
  for (const d of req.designation ?? []) parameter.push({ name: 'designation', valueString: d });
  if (req.displayLanguage !== undefined) {
    parameter.push({ name: 'displayLanguage', valueCode: echoLanguageList(req.displayLanguage) });
  }
  if (req.excludeNested !== undefined)
    parameter.push({ name: 'excludeNested', valueBoolean: req.excludeNested });
  if (req.excludeNotForUI !== undefined) {
    parameter.push({ name: 'excludeNotForUI', valueBoolean: req.excludeNotForUI });
  }
  if (req.versionsMatch === true || (req.versionsMatch === undefined && m.versionsMatched)) {
    parameter.push({ name: 'versionsMatch', valueBoolean: true });
  }
  // valueSetVersion is not echoed (the value set's own version says it); the version parameters are echoed when
  // they chose a version (as the IG's expansions show).
  for (const p of m.versionParams) {
    const bar = p.indexOf('|');
    parameter.push({ name: p.slice(0, bar), valueUri: p.slice(bar + 1) });
  }
  for (const u of m.usedCodeSystems()) parameter.push({ name: 'used-codesystem', valueUri: u });
  for (const u of m.usedValueSets) parameter.push({ name: 'used-valueset', valueUri: u });
  for (const f of m.fragments) parameter.push({ name: 'used-fragment', valueUri: f });
  return parameter;
}
