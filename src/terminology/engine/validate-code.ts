// $validate-code (ValueSet and CodeSystem): is a code (code+system, a Coding, or the Codings of a CodeableConcept)
// in the value set (its cached Membership: a position lookup, never an expansion) or the code system, and is its
// display right? The answer is a Parameters resource (result, message, code, system, version, display, issues) with
// the issue types and texts of the HL7 terminology ecosystem IG (tx-issue-type). Each Coding costs its hash lookup
// in its code system index and its position in the membership: nothing grows with the size of either.
import { FLAG_ABSTRACT, FLAG_INACTIVE, type CodeSystemIndex } from './code-system-index.js';
import { inMemoryDetails } from './concept-details.js';
import { displayOf } from './entries.js';
import { parseLanguageList, type LanguageRange } from './languages.js';
import type { ParametersParameter, ParametersResource } from './lookup.js';
import type { Membership } from './membership.js';
import type { CodingValue } from './parameters.js';
import type { Resolver } from './resolver.js';
import { TerminologyError, withTxIssueType } from './errors.js';
import type { SupplementSet } from './supplements.js';
import {
  at,
  displayIssue,
  supplementAsSystem,
  toIssue,
  unknownSystem,
  unknownVersion,
  versionMismatch,
  type CheckedForm,
  type ValidationIssue,
  type VersionSpec,
} from './validate-issues.js';
import { compareVersionsDesc, resolveCodeSystem, versionMatches } from './versions.js';

const STANDARDS_STATUS = 'http://hl7.org/fhir/StructureDefinition/structuredefinition-standards-status';
const VS_DEPRECATED = 'http://hl7.org/fhir/StructureDefinition/valueset-deprecated';
/** The IG's message ids of the status-check notes, by status. */
const STATUS_MESSAGE_IDS: Readonly<Record<string, string>> = {
  draft: 'MSG_DRAFT',
  experimental: 'MSG_EXPERIMENTAL',
  deprecated: 'MSG_DEPRECATED',
  withdrawn: 'MSG_WITHDRAWN',
};

/** What a $validate-code checks in, and how. */
export interface ValidateSettings {
  /** ValueSet mode: the value set's membership, its canonical (`url|version`) and its compose (for version pins
   * and `inactive`). CodeSystem mode: undefined. */
  valueSet?: {
    membership: Membership;
    canonical: string;
    /** `Reference to <status> ValueSet <canonical>` notes: the value set's and its imports' (deprecated,
     * withdrawn). */
    statusNotes: readonly string[];
    /** How the value set names the version of each code system it includes (absent: versionless). */
    versionSpecs: ReadonlyMap<string, VersionSpec>;
    excludesInactive: boolean;
  };
  /** check-system-version failures of the value set's code systems, by url (the IG's text): a Coding of such a
   * system is not valid. */
  versionCheckFailures?: ReadonlyMap<string, { text: string; required: string }>;
  /** CodeSystem mode: the code system. */
  codeSystem?: CodeSystemIndex;
  displayLanguage?: string;
  /** A wrong display is a warning. */
  lenientDisplay?: boolean;
  /** false: abstract codes are not valid. */
  abstract?: boolean;
  activeOnly?: boolean;
  /** Check membership only, not displays. */
  membershipOnly?: boolean;
  /** A code without a system takes the value set's system that has it. */
  inferSystem?: boolean;
  supplements: SupplementSet;
}

/** The outcome of one Coding. */
interface CodingOutcome {
  valid: boolean;
  index?: CodeSystemIndex;
  ord?: number;
  /** The system the answer names (also when unknown). */
  system?: string;
  code?: string;
  issues: ValidationIssue[];
  unknownSystem?: string;
  /** `url|version` of a code system version nobody has, that the answer is false for. */
  causedBy?: string;
  /** The concept is a member of the value set (whatever else is wrong). */
  member?: boolean;
  /** The concept's status when it says more than active/inactive (retired, deprecated, ...). */
  status?: string;
}

/** Checks a code; the Parameters answer of $validate-code. `codings` has one Coding for the `code` and `coding`
 * forms, the CodeableConcept's for the third. */
export async function validateCodings(
  form: CheckedForm,
  codings: readonly CodingValue[],
  settings: ValidateSettings,
  resolver: Resolver,
  codeableConcept?: unknown,
): Promise<ParametersResource> {
  const langs = languagesOf(settings.displayLanguage);
  // The display answered falls back to the default one (a wildcard after the languages asked for).
  const displayLangs = settings.displayLanguage
    ? parseLanguageList(settings.displayLanguage, 'displayLanguage')
    : undefined;
  const outcomes: CodingOutcome[] = [];
  for (let i = 0; i < codings.length; i++) {
    const prefix = form === 'code' ? '' : form === 'coding' ? 'Coding' : `CodeableConcept.coding[${i}]`;
    outcomes.push(await checkCoding(codings[i], prefix, form, settings, resolver, langs));
  }
  const issues: ValidationIssue[] = outcomes.flatMap((o) => o.issues);
  // The Coding the answer describes: a valid one, else (a CodeableConcept) the first one whose concept is known.
  const chosen =
    outcomes.find((o) => o.valid) ??
    (form === 'codeableConcept' ? outcomes.find((o) => o.member) : outcomes[0]);
  const valid = chosen?.valid === true;
  // Notes on the status of what was used: the code system of the answer, the value set and its imports.
  const notes: string[] = [];
  if (chosen?.index)
    for (const w of chosen.index.meta.warnings ?? [])
      notes.push(`Reference to ${w} CodeSystem ${canonicalOf(chosen.index)}`);
  notes.push(...(settings.valueSet?.statusNotes ?? []));
  for (const text of new Set(notes)) {
    const status = /^Reference to (\w+) /.exec(text)?.[1] ?? '';
    const messageId = STATUS_MESSAGE_IDS[status];
    issues.push({
      severity: 'information',
      code: 'business-rule',
      txType: 'status-check',
      text,
      ...(messageId ? { messageId } : {}),
    });
  }
  if (form === 'codeableConcept') {
    // A Coding of a CodeableConcept that is not in the value set only informs when another one is.
    for (const iss of issues)
      if (iss.txType === 'not-in-vs') {
        iss.severity = 'information';
        iss.txType = 'this-code-not-in-vs';
      }
    if (!valid && !outcomes.some((o) => o.member)) {
      const where = settings.valueSet ? `the value set '${settings.valueSet.canonical}'` : 'the code system';
      issues.unshift({
        severity: 'error',
        code: 'code-invalid',
        txType: 'not-in-vs',
        messageId: 'TX_GENERAL_CC_ERROR_MESSAGE',
        text: `No valid coding was found for ${where}`,
      });
    }
  }
  const out: ParametersParameter[] = [];
  if (chosen) {
    const code = chosen.code ?? codings[outcomes.indexOf(chosen)]?.code;
    if (code !== undefined) out.push({ name: 'code', valueCode: code });
    if (chosen.index && chosen.ord !== undefined) {
      const { index, ord } = chosen;
      if (code !== undefined && index.code(ord) !== code)
        out.push({ name: 'normalized-code', valueCode: index.code(ord) });
      const display =
        displayLangs || settings.supplements.size > 0
          ? displayOf(index, ord, undefined, {
              langs: displayLangs,
              includeDesignations: false,
              properties: [],
              supplements: settings.supplements,
            })
          : index.display(ord);
      if (display !== undefined) out.push({ name: 'display', valueString: display });
      if ((index.flags[ord] & FLAG_INACTIVE) !== 0) out.push({ name: 'inactive', valueBoolean: true });
      const status = chosen.status ?? statusOf(index, ord);
      if (status !== undefined) out.push({ name: 'status', valueCode: status });
      out.push({ name: 'system', valueUri: index.url });
      if (index.version !== undefined) out.push({ name: 'version', valueString: index.version });
    } else if (chosen.system !== undefined) {
      out.push({ name: 'system', valueUri: chosen.system });
    }
  }
  for (const u of new Set(outcomes.flatMap((o) => (o.unknownSystem !== undefined ? [o.unknownSystem] : []))))
    out.push({ name: 'x-unknown-system', valueCanonical: u });
  for (const u of new Set(outcomes.flatMap((o) => (o.causedBy !== undefined ? [o.causedBy] : []))))
    out.push({ name: 'x-caused-by-unknown-system', valueCanonical: u });
  if (form === 'codeableConcept' && codeableConcept !== undefined)
    out.push({ name: 'codeableConcept', valueCodeableConcept: codeableConcept });
  // Valid: a Coding is in (and right), and no Coding has an error (an unknown code in another Coding of a
  // CodeableConcept makes it false too).
  const result = valid && !issues.some((i) => i.severity === 'error');
  out.push({ name: 'result', valueBoolean: result });
  // The message: errors and warnings (not the quiet ones), and a display right only in another language.
  const told = issues
    .filter(
      (i) =>
        !i.quiet && (i.severity === 'error' || i.severity === 'warning' || i.txType === 'invalid-display'),
    )
    .map((i) => i.text);
  if (told.length > 0) out.push({ name: 'message', valueString: [...new Set(told)].join('; ') });
  if (issues.length > 0)
    out.push({ name: 'issues', resource: { resourceType: 'OperationOutcome', issue: issues.map(toIssue) } });
  return { resourceType: 'Parameters', parameter: out };
}

/** The displayLanguage list; a malformed one is a 400 with the IG's text and issue type. */
function languagesOf(value: string | undefined): LanguageRange[] | undefined {
  if (value === undefined) return undefined;
  try {
    return parseLanguageList(value, 'displayLanguage', false);
  } catch {
    throw withTxIssueType(
      'invalid-display',
      new TerminologyError(400, 'processing', `Invalid displayLanguage: '${value}'`),
    );
  }
}

/** `url|version` of a code system (its url without a version). */
function canonicalOf(index: CodeSystemIndex): string {
  return index.version !== undefined ? `${index.url}|${index.version}` : index.url;
}

async function checkCoding(
  coding: CodingValue,
  prefix: string,
  form: CheckedForm,
  settings: ValidateSettings,
  resolver: Resolver,
  langs: LanguageRange[] | undefined,
): Promise<CodingOutcome> {
  const issues: ValidationIssue[] = [];
  const vs = settings.valueSet;
  const code = coding.code ?? '';
  let system = coding.system;
  const version = coding.version;
  const provided = (display?: string): string =>
    `${system ?? ''}${version !== undefined ? `|${version}` : ''}#${code}${display !== undefined ? ` ('${display}')` : ''}`;
  const notInVs = (display?: string): ValidationIssue => ({
    severity: 'error',
    code: 'code-invalid',
    txType: 'not-in-vs',
    messageId: 'None_of_the_provided_codes_are_in_the_value_set_one',
    text: `The provided code '${provided(display)}' was not found in the value set '${vs?.canonical ?? ''}'`,
    path: at(prefix, 'code'),
  });
  // CodeSystem mode: the code system is given (undefined: nobody has it); a Coding naming another is not in it.
  if (!vs) {
    const cs = settings.codeSystem;
    if (!cs) {
      issues.push(unknownSystem(system ?? '', at(prefix, 'system')));
      return { valid: false, system, code, issues, unknownSystem: system };
    }
    system ??= cs.url;
    if (system !== cs.url) {
      issues.push({
        severity: 'error',
        code: 'invalid',
        txType: 'invalid-data',
        text: `The system '${system}' is not the code system '${cs.url}'`,
        path: at(prefix, 'system'),
      });
      return { valid: false, system, code, issues };
    }
    if (cs.meta.content === 'supplement') {
      issues.push(supplementAsSystem(cs, prefix));
      return { valid: false, system, code, issues };
    }
    return conceptChecks(cs, coding, prefix, settings, langs, issues, undefined, resolver);
  }

  if (system === undefined || system === '') {
    if (settings.inferSystem && form === 'code') {
      const found = inferred(vs.membership, code);
      if (found.length === 1) system = found[0];
      else {
        issues.push(notInVs(coding.display));
        issues.push({
          severity: 'error',
          code: 'not-found',
          txType: 'cannot-infer',
          messageId:
            found.length === 0
              ? 'UNABLE_TO_INFER_CODESYSTEM'
              : 'Unable_to_resolve_system__value_set_has_multiple_matches',
          text:
            found.length === 0
              ? `The System URI could not be determined for the code '${code}' in the ValueSet '${vs.canonical}'`
              : `The System URI could not be determined for the code '${code}' in the ValueSet ` +
                `'${vs.canonical}': value set expansion has multiple matches: [${found.join(', ')}]`,
          path: at(prefix, 'code'),
        });
        return { valid: false, code, issues };
      }
    } else {
      issues.push({
        severity: 'warning',
        code: 'invalid',
        txType: 'invalid-data',
        messageId: 'Coding_has_no_system__cannot_validate',
        text:
          'Coding has no system. A code with no system has no defined meaning, and it cannot be validated. ' +
          'A system should be provided',
        path: prefix === '' ? 'code' : prefix,
      });
      issues.push(notInVs(coding.display));
      return { valid: false, code, issues };
    }
  }
  if (!/^[a-z][a-z0-9+.-]*:/i.test(system)) {
    issues.push({
      severity: 'error',
      code: 'invalid',
      txType: 'invalid-data',
      messageId: 'Terminology_TX_System_Relative',
      text: 'Coding.system must be an absolute reference, not a local reference',
      path: at(prefix, 'system'),
    });
    issues.push(notInVs(coding.display));
    issues.push(unknownSystem(system, at(prefix, 'system')));
    return { valid: false, system, code, issues, unknownSystem: system };
  }

  // The versions the value set uses for this system: those that have the code as a member first (the one whose
  // display is the one given, else the highest version), then the others.
  const m = vs.membership;
  const sources = preferred(m, system, code, coding.display);
  let index: CodeSystemIndex | undefined;
  if (version !== undefined) {
    const spec = vs.versionSpecs.get(system);
    const matches = spec?.effective === undefined || spec.effective.some((v) => versionMatches(version, v));
    const used = sources[0];
    index = await resolveCodeSystem(resolver, system, version);
    if (!index) {
      const versions = (await resolver.codeSystemVersions?.(system)) ?? [];
      issues.push(unknownVersion(system, version, versions, at(prefix, 'system')));
      // The value set's version still says what the code is (display, ...), but the answer is false.
      if (used && (spec?.effective === undefined || !matches))
        issues.push(versionMismatch(system, spec, used, version, prefix));
      const causedBy = `${system}|${version}`;
      if (!used) {
        issues.push(notInVs(coding.display));
        // No version at all: the code system is unknown, not only the version.
        return versions.length === 0
          ? { valid: false, system, code, issues, unknownSystem: system }
          : { valid: false, system, code, issues, causedBy };
      }
      const ord = used.lookupCode(code);
      if (ord < 0) return { valid: false, system, code, issues, index: used, causedBy };
      return {
        valid: false,
        system,
        code,
        issues,
        index: used,
        ord,
        causedBy,
        member: m.hasVersion(used, ord),
      };
    }
    if (!matches && used) {
      // The value set uses another version: the answer is about that one.
      issues.push(versionMismatch(system, spec, used, version, prefix));
      index = used;
    }
  } else {
    index = sources[0];
    if (!index) {
      try {
        index = await resolveCodeSystem(resolver, system, undefined);
      } catch {
        index = undefined;
      }
    }
  }
  if (!index) {
    const isValueSet = await resolver.valueSet(system).catch(() => undefined);
    issues.push(notInVs(coding.display));
    if (isValueSet) {
      issues.push({
        severity: 'error',
        code: 'invalid',
        txType: 'invalid-data',
        messageId: 'Terminology_TX_System_ValueSet2',
        text: `The Coding references a value set, not a code system ('${system}')`,
        path: at(prefix, 'system'),
      });
      return { valid: false, system, code, issues };
    }
    issues.push(unknownSystem(system, at(prefix, 'system')));
    return { valid: false, system, code, issues, unknownSystem: system };
  }
  if (index.meta.content === 'supplement') {
    issues.push(supplementAsSystem(index, prefix));
    issues.push(notInVs(coding.display));
    return { valid: false, system, code, issues };
  }
  const failure = settings.versionCheckFailures?.get(system);
  // The check fails when the version the answer is about (the Coding's, or the value set's) is not one it allows.
  if (failure !== undefined && !versionMatches(index.version ?? '', failure.required)) {
    issues.push({
      severity: 'error',
      code: 'exception',
      txType: 'version-error',
      messageId: 'VALUESET_VERSION_CHECK',
      text: failure.text,
      path: at(prefix, 'version'),
    });
    const checked = await conceptChecks(index, coding, prefix, settings, langs, issues, notInVs, resolver);
    return { ...checked, valid: false };
  }
  return conceptChecks(index, coding, prefix, settings, langs, issues, notInVs, resolver);
}

/** The checks of a code in a known code system: exists (case), in the value set (active, abstract), display. */
async function conceptChecks(
  index: CodeSystemIndex,
  coding: CodingValue,
  prefix: string,
  settings: ValidateSettings,
  langs: LanguageRange[] | undefined,
  issues: ValidationIssue[],
  notInVs: ((display?: string) => ValidationIssue) | undefined,
  resolver: Resolver,
): Promise<CodingOutcome> {
  const code = coding.code ?? '';
  const system = index.url;
  const ord = index.lookupCode(code);
  const versionText = index.version !== undefined ? ` version '${index.version}'` : '';
  if (ord < 0 && settings.membershipOnly && notInVs) {
    // Membership only: an unknown code is simply not in the value set.
    issues.push(notInVs(coding.display));
    return { valid: false, system, code, issues, index };
  }
  if (ord < 0) {
    const fragment = index.meta.content === 'fragment';
    issues.push({
      severity: fragment ? 'warning' : 'error',
      code: 'code-invalid',
      txType: 'invalid-code',
      ...(fragment
        ? { messageId: 'UNKNOWN_CODE_IN_FRAGMENT' }
        : index.version !== undefined
          ? { messageId: 'Unknown_Code_in_Version' }
          : {}),
      text: fragment
        ? `Unknown Code '${code}' in the CodeSystem '${system}'${versionText} - note that the code system is ` +
          'labeled as a fragment, so the code may be valid in some other fragment'
        : `Unknown code '${code}' in the CodeSystem '${system}'${versionText}`,
      path: at(prefix, 'code'),
      ...(fragment ? { quiet: true as const } : {}),
    });
    // A fragment does not say a code is not in the code system: the answer is a warning, and true.
    if (notInVs && !fragment) issues.push(notInVs(coding.display));
    return { valid: fragment, system, code, issues, index };
  }
  if (index.code(ord) !== code) {
    const canonical = index.version !== undefined ? `${system}|${index.version}` : system;
    issues.push({
      severity: 'information',
      code: 'business-rule',
      txType: 'code-rule',
      messageId: 'CODE_CASE_DIFFERENCE',
      text:
        `The code '${code}' differs from the correct code '${index.code(ord)}' by case. Although the code ` +
        `system '${canonical}' is case insensitive, implementers are strongly encouraged to use the correct ` +
        'case anyway',
      path: at(prefix, 'code'),
    });
  }
  const flags = index.flags[ord];
  const inactive = (flags & FLAG_INACTIVE) !== 0;
  let valid = true;
  const vs = settings.valueSet;
  // In this version when the value set uses it, else in the version it uses (same code).
  const inVs = !vs
    ? true
    : vs.membership.sources.includes(index)
      ? vs.membership.hasVersion(index, ord)
      : vs.membership.positionOf(index, ord) >= 0;
  if (inactive) {
    issues.push({
      severity: 'warning',
      code: 'business-rule',
      txType: 'code-comment',
      messageId: 'INACTIVE_CONCEPT_FOUND',
      text:
        `The concept '${index.code(ord)}' has a status of ` +
        `${statusOf(index, ord) !== undefined ? `${statusOf(index, ord)} and ` : ''}inactive and its use should be reviewed`,
      path: prefix === '' ? 'code' : prefix,
    });
    if (settings.activeOnly || (vs && !inVs && vs.excludesInactive)) {
      issues.push({
        severity: 'error',
        code: 'business-rule',
        txType: 'code-rule',
        messageId: 'STATUS_CODE_WARNING_CODE',
        text: `The concept '${index.code(ord)}' is valid but is not active`,
        path: at(prefix, 'code'),
      });
      valid = false;
    }
  }
  // Deprecated or withdrawn: the status property, or the concept's standards-status extension (read only for a
  // code system whose concepts have extensions).
  let status = index.statuses.get(ord);
  if (status !== 'deprecated' && status !== 'withdrawn') {
    const held = inMemoryDetails(index);
    const details = held
      ? held.get(ord)
      : resolver.hasConceptExtensions?.(index)
        ? (await resolver.conceptDetails?.(index, [ord]))?.get(ord)
        : undefined;
    const std = details?.extension?.find((e) => e.url === STANDARDS_STATUS)?.valueCode;
    if (std === 'deprecated' || std === 'withdrawn') status = std;
  }
  if (status === 'deprecated' || status === 'withdrawn') {
    issues.push({
      severity: 'warning',
      code: 'business-rule',
      txType: 'code-comment',
      ...(status === 'deprecated' ? { messageId: 'DEPRECATED_CONCEPT_FOUND' } : {}),
      text: `The concept '${index.code(ord)}' is ${status} and its use should be reviewed`,
      path: at(prefix, 'code'),
    });
  }
  if (settings.abstract === false && (flags & FLAG_ABSTRACT) !== 0) {
    issues.push({
      severity: 'error',
      code: 'business-rule',
      txType: 'code-rule',
      messageId: 'ABSTRACT_CODE_NOT_ALLOWED',
      text: `Code '${system}#${index.code(ord)}' is abstract, and not allowed in this context`,
      path: at(prefix, 'code'),
    });
    valid = false;
  }
  if (vs && inVs) {
    // The value set may mark its use of the concept (a standards-status extension on its compose concept).
    const pos = vs.membership.positionOf(index, ord);
    const ext = vs.membership.overrides.get(pos)?.extension ?? [];
    const deprecated = ext.find((e) => e.url === VS_DEPRECATED);
    const marked =
      deprecated && (deprecated.valueBoolean === true || deprecated.valueCode === 'true')
        ? 'deprecated'
        : ext.find((e) => e.url === STANDARDS_STATUS)?.valueCode;
    if (typeof marked === 'string' && marked !== 'normative' && marked !== 'trial-use')
      issues.push({
        severity: 'warning',
        code: 'business-rule',
        txType: 'code-comment',
        messageId: 'CONCEPT_DEPRECATED_IN_VALUESET',
        text:
          `The presence of the concept '${index.code(ord)}' in the system '${system}' in the value set ` +
          `${vs.canonical} is marked with a status of ${marked} and its use should be reviewed`,
        path: at(prefix, 'code'),
        quiet: true,
      });
  }
  if (vs && notInVs && (!inVs || !valid)) {
    issues.push(notInVs(coding.display));
    valid = false;
  }
  if (coding.display !== undefined && !settings.membershipOnly) {
    const wrong = displayIssue(index, ord, coding.display, settings, langs, at(prefix, 'display'));
    if (wrong) {
      issues.push(wrong);
      if (wrong.severity === 'error') valid = false;
    }
  }
  const shownStatus = status === 'deprecated' || status === 'withdrawn' ? status : statusOf(index, ord);
  return { valid, system, code, issues, index, ord, member: vs !== undefined && inVs, status: shownStatus };
}

/** A concept's status property when it is one of the standard statuses beyond active/inactive (a code system's
 * own `status` property with other values says nothing here). */
function statusOf(index: CodeSystemIndex, ord: number): string | undefined {
  const s = index.statuses.get(ord);
  return s !== undefined && SHOWN_STATUSES.has(s) ? s : undefined;
}

const SHOWN_STATUSES: ReadonlySet<string> = new Set(['retired', 'deprecated', 'withdrawn']);

/** The sources of a membership for a system, best first for a code (see checkCoding). */
function preferred(
  m: Membership,
  system: string,
  code: string,
  display: string | undefined,
): CodeSystemIndex[] {
  const rank = (s: CodeSystemIndex): number => {
    const ord = s.lookupCode(code);
    if (ord < 0) return 0;
    if (!m.hasVersion(s, ord)) return 1;
    return display !== undefined && s.display(ord) === display ? 3 : 2;
  };
  return m.sources
    .filter((s) => s.url === system)
    .map((s) => ({ s, r: rank(s) }))
    .sort((a, b) => b.r - a.r || compareVersionsDesc(a.s.version ?? '', b.s.version ?? ''))
    .map((x) => x.s);
}

/** The systems of a membership that have the code (inferSystem). */
function inferred(m: Membership, code: string): string[] {
  const out = new Set<string>();
  for (const s of m.sources) {
    const ord = s.lookupCode(code);
    if (ord >= 0 && m.positionOf(s, ord) >= 0) out.add(s.url);
  }
  return [...out];
}
