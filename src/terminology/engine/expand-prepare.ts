// The prepare stage of $expand, and the plan it makes: the request as the value set completes it (its
// valueset-expansion-parameter extensions), read once into what the later stages use: the normalised filter, the
// version parameters by url, the supplements asked for, the entry flags to leave out, and how entries are written.
// The stages after it (membership, select, page, describe) read the plan, not the request's raw values.
import { FLAG_ABSTRACT, FLAG_INACTIVE } from './code-system-index.js';
import { EXT } from './concept-details.js';
import type { OutputSettings } from './entries.js';
import { TerminologyError, invalid } from './errors.js';
import { parseLanguageList } from './languages.js';
import { MAX_REPEATS, MAX_STRING, PARAMETER_BY_NAME } from './parameters.js';
import { prepareFilter, type PreparedFilter } from './ranking.js';
import type { CheckedRequest } from './request-check.js';
import { NO_SUPPLEMENTS } from './supplements.js';
import type { ExpandLimits, ExpandRequest, ValueSetResource } from './types.js';

/** One expansion's plan: made by prepare, read by the stages after it. */
export interface ExpansionPlan {
  /** The value set expanded. */
  readonly vs: ValueSetResource;
  /** The request, with the parameters the value set declares where the request is silent. */
  readonly req: ExpandRequest;
  /** The value set came with the request (its id and versionId say nothing about its compose). */
  readonly inline: boolean;
  readonly limits: ExpandLimits;
  /** The normalised filter; undefined when there is none (or it is blank). */
  readonly filter: PreparedFilter | undefined;
  /** system-version: the version of a code system an include names without one, by url. */
  readonly systemVersion: Map<string, string>;
  /** force-system-version: the version of a code system whatever the include says, by url. */
  readonly forceSystemVersion: Map<string, string>;
  /** check-system-version: the version (pattern) a code system must have, by url. */
  readonly checkSystemVersion: Map<string, string>;
  /** default-valueset-version: the version of an imported value set referenced without one, by url. */
  readonly defaultValueSetVersion: Map<string, string>;
  /** The version parameters as part of a membership's cache key ('' without any, the usual case). */
  readonly versionKey: string;
  /** The canonicals of the supplements to apply: useSupplement, then the value set's own. */
  readonly supplementCanonicals: readonly string[];
  /** Entry flags to leave out: inactive (activeOnly), abstract (excludeNotForUI). */
  readonly excludeMask: number;
  /** How the entries are written: the supplements once resolved and the page's details once loaded go here. */
  readonly settings: OutputSettings;
}

/** The plan of an expansion of `vs` for a checked request; a 400 (404 for another valueSetVersion) when the value
 * set's parameters or the request's structured values (canonicals, language lists) are malformed. */
export function prepare(
  vs: ValueSetResource,
  checked: CheckedRequest,
  limits: ExpandLimits,
  inline: boolean,
): ExpansionPlan {
  // Parameters the value set itself declares (valueset-expansion-parameter) apply where the request is silent.
  const req = withComposeParameters(checked.request, vs);
  // The request's filter was prepared when it was checked; one the value set declares is prepared here.
  const filter = req.filter === checked.request.filter ? checked.filter : prepareFilter(req.filter, limits);
  if (req.valueSetVersion !== undefined && vs.version !== undefined && req.valueSetVersion !== vs.version) {
    throw new TerminologyError(
      404,
      'not-found',
      `ValueSet ${vs.url ?? ''} version ${req.valueSetVersion} not found (this one is version ${vs.version})`,
    );
  }
  const systemVersion = canonicalMap(req.systemVersion, 'system-version');
  const forceSystemVersion = canonicalMap(req.forceSystemVersion, 'force-system-version');
  const checkSystemVersion = canonicalMap(req.checkSystemVersion, 'check-system-version');
  const defaultValueSetVersion = canonicalMap(req.defaultValueSetVersion, 'default-valueset-version');
  const langs =
    req.displayLanguage !== undefined ? parseLanguageList(req.displayLanguage, 'displayLanguage') : undefined;
  const vsSupplements = valueSetSupplements(vs);
  const supplementCanonicals =
    req.useSupplement === undefined && vsSupplements.length === 0
      ? NO_STRINGS
      : [...(req.useSupplement ?? []), ...vsSupplements];
  const versionKey =
    systemVersion.size + forceSystemVersion.size + checkSystemVersion.size + defaultValueSetVersion.size ===
      0 && req.versionsMatch === undefined
      ? ''
      : JSON.stringify([
          [...systemVersion],
          [...forceSystemVersion],
          [...checkSystemVersion],
          [...defaultValueSetVersion],
          req.versionsMatch,
        ]);
  const settings: OutputSettings = {
    langs,
    includeDesignations: req.includeDesignations === true,
    designations: req.designation,
    properties: req.property ?? NO_STRINGS,
    supplements: NO_SUPPLEMENTS,
    vsLanguage: typeof vs.language === 'string' ? vs.language : undefined,
  };
  return {
    vs,
    req,
    inline,
    limits,
    filter,
    systemVersion,
    forceSystemVersion,
    checkSystemVersion,
    defaultValueSetVersion,
    versionKey,
    supplementCanonicals,
    excludeMask: (req.activeOnly ? FLAG_INACTIVE : 0) | (req.excludeNotForUI ? FLAG_ABSTRACT : 0),
    settings,
  };
}

const NO_STRINGS: readonly string[] = [];

/** Shared by requests without system-version parameters; never written to. */
const NO_VERSIONS: ReadonlyMap<string, string> = new Map();

/** `system|version` values as a map by system; a 400 naming the parameter for one that is not. */
function canonicalMap(v: string | string[] | undefined, name: string): Map<string, string> {
  if (v === undefined) return NO_VERSIONS as Map<string, string>;
  const out = new Map<string, string>();
  for (const c of Array.isArray(v) ? v : [v]) {
    const bar = c.indexOf('|');
    if (bar <= 0 || bar === c.length - 1) {
      throw invalid(`Parameter ${name} must be a canonical 'system|version' (got '${c}')`, [name]);
    }
    out.set(c.slice(0, bar), c.slice(bar + 1));
  }
  return out;
}

/** The supplements a value set asks for (valueset-supplement extensions). */
function valueSetSupplements(vs: ValueSetResource): readonly string[] {
  if (!vs.extension) return NO_STRINGS;
  const out: string[] = [];
  for (const e of vs.extension) {
    if (e.url !== EXT.vsSupplement) continue;
    const v = e.valueCanonical ?? e.valueUri ?? e.valueString;
    if (typeof v === 'string' && v !== '') out.push(v);
  }
  return out;
}

/**
 * The request with the parameters the value set declares on its compose (valueset-expansion-parameter
 * extensions; R5's compose.property, as R4 carries it): a value the request gives wins, a repeatable parameter
 * adds. Names this server does not know are ignored (the value set is not the client's request); a bad value for
 * one it knows is a 400.
 */
function withComposeParameters(req: ExpandRequest, vs: ValueSetResource): ExpandRequest {
  const ext = vs.compose?.extension;
  if (!ext || ext.length === 0) return req;
  let out: Record<string, unknown> | undefined;
  const set = (name: string, raw: unknown): void => {
    const p = PARAMETER_BY_NAME.get(name);
    if (!p || p.target) return;
    let v: unknown = raw;
    if (p.type === 'boolean' && typeof raw === 'string')
      v = raw === 'true' ? true : raw === 'false' ? false : raw;
    if (p.type === 'integer' && typeof raw === 'string' && /^\d{1,9}$/.test(raw)) v = Number(raw);
    const ok =
      p.type === 'boolean'
        ? typeof v === 'boolean'
        : p.type === 'integer'
          ? Number.isInteger(v)
          : typeof v === 'string' && v.length <= (p.maxLength ?? MAX_STRING);
    if (!ok) {
      throw invalid(
        `The value set's expansion parameter ${name} has an invalid value (${String(raw).slice(0, 60)})`,
        ['ValueSet.compose.extension'],
      );
    }
    out ??= { ...req };
    if (p.repeats) {
      const list = (out[p.key] as unknown[] | undefined) ?? [];
      if (list.length >= MAX_REPEATS) {
        throw invalid(`The value set gives expansion parameter ${name} more than ${MAX_REPEATS} times`, [
          'ValueSet.compose.extension',
        ]);
      }
      if (!list.includes(v)) out[p.key] = [...list, v];
    } else if (out[p.key] === undefined) {
      out[p.key] = v;
    }
  };
  for (const e of ext) {
    if (e.url === EXT.vsExpansionParameter) {
      const parts = e.extension ?? [];
      const name = parts.find((x) => x.url === 'name');
      const value = parts.find((x) => x.url === 'value');
      const n = name?.valueCode ?? name?.valueString;
      if (typeof n !== 'string' || !value) continue;
      const vk = Object.keys(value).find((k) => k.startsWith('value'));
      if (vk) set(n, value[vk]);
    } else if (e.url === EXT.composeProperty) {
      const v = e.valueString ?? e.valueCode;
      if (typeof v === 'string') set('property', v);
    }
  }
  return (out as ExpandRequest | undefined) ?? req;
}
