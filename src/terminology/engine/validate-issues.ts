// The issues of a $validate-code answer (its OperationOutcome), as the HL7 terminology ecosystem IG's reference
// servers write them: the tx-issue-type of each, its text (the IG's tests compare most texts), and where in the
// request it points (`code`, `Coding.display`, `CodeableConcept.coding[1].version`, ...).
import type { CodeSystemIndex } from './code-system-index.js';
import { displayChoices } from './entries.js';
import { parseTag, rangeMatches, type LanguageRange } from './languages.js';
import type { SupplementSet } from './supplements.js';
import { compareVersionsDesc } from './versions.js';

export const TX_ISSUE_TYPE = 'http://hl7.org/fhir/tools/CodeSystem/tx-issue-type';
const MESSAGE_ID = 'http://hl7.org/fhir/StructureDefinition/operationoutcome-message-id';

/** One issue of the answer's OperationOutcome. */
export interface ValidationIssue {
  severity: 'error' | 'warning' | 'information';
  /** The FHIR IssueType code. */
  code: string;
  /** The tx-issue-type code. */
  txType: string;
  text: string;
  /** Where (a path into the request: `code`, `Coding.display`, `CodeableConcept.coding[1].code`). */
  path?: string;
  /** Not repeated in the answer's `message` (a note on the value set's version or content, not on the code). */
  quiet?: true;
  /** The IG's message id (`operationoutcome-message-id`), as its reference servers send it. */
  messageId?: string;
}

/** How the code was given: its paths in issues follow the form (`code` / `Coding.code` /
 * `CodeableConcept.coding[i].code`). */
export type CheckedForm = 'code' | 'coding' | 'codeableConcept';

/** How a value set names a code system's version: its include's version (none: versionless) and the version in
 * force (a pattern, maybe from a version parameter: force-system-version, system-version or check-system-version
 * for a versionless include). */
export interface VersionSpec {
  include?: string;
  /** The versions (patterns) in force, one per include of the system; none: a versionless include. */
  effective?: readonly string[];
  viaParameter: boolean;
}

/** The issue as an OperationOutcome.issue: where it points in `expression` (R4 deprecates `location`, which the
 * IG's later expected answers leave out). */
export function toIssue(i: ValidationIssue): Record<string, unknown> {
  return {
    severity: i.severity,
    code: i.code,
    ...(i.messageId !== undefined ? { extension: [{ url: MESSAGE_ID, valueString: i.messageId }] } : {}),
    details: { coding: [{ system: TX_ISSUE_TYPE, code: i.txType }], text: i.text },
    ...(i.path !== undefined ? { expression: [i.path] } : {}),
  };
}

/** The path of an element of the checked code (`code`, `Coding.code`, ...). */
export function at(prefix: string, element: string): string {
  return prefix === '' ? element : `${prefix}.${element}`;
}

/** What the display check reads of a request. */
export interface DisplaySettings {
  displayLanguage?: string;
  /** A wrong display is a warning. */
  lenientDisplay?: boolean;
  supplements: SupplementSet;
}

/** The issue for a display that is not one of the concept's in the requested languages (none when it is): with
 * displayLanguage, the displays in those languages (a display without a language is in every one); a display that
 * is right only in another language is noted (information) when the concept has none in the requested ones. */
export function displayIssue(
  index: CodeSystemIndex,
  ord: number,
  display: string,
  settings: DisplaySettings,
  langs: LanguageRange[] | undefined,
  path: string,
): ValidationIssue | undefined {
  const choices = displayChoices(index, ord, settings.supplements);
  if (choices.length === 0) return undefined;
  const inLanguage = (language: string | undefined): boolean =>
    !langs || !language || langs.some((l) => rangeMatches(l, parseTag(language), 'language'));
  const matching = choices.filter((c) => inLanguage(c.language));
  const hit =
    matching.find((c) => c.value === display && c.active) ?? matching.find((c) => c.value === display);
  if (hit && !hit.active) {
    // Right, but a designation that is no longer to be used (withdrawn): accepted, with a warning naming the
    // current ones (not repeated in `message`, as the IG's reference server answers).
    const current = [...new Set(matching.filter((c) => c.active).map((c) => c.value))].sort();
    return {
      severity: 'warning',
      code: 'invalid',
      txType: 'display-comment',
      messageId: 'INACTIVE_DISPLAY_FOUND',
      text:
        `'${display}' is no longer considered a correct display for code '${index.code(ord)}' (status = ` +
        `deprecated). The correct display is one of ${current.map((v) => `"${v}"`).join(', ')}.`,
      path,
      quiet: true,
    };
  }
  if (hit) return undefined;
  const subject = `${index.url}#${index.code(ord)}`;
  const asked = settings.displayLanguage ?? '--';
  const severity = settings.lenientDisplay ? 'warning' : 'error';
  if (matching.length === 0) {
    const fallback = index.display(ord) ?? choices[0].value;
    if (choices.some((c) => c.value === display))
      return {
        severity: 'information',
        code: 'invalid',
        txType: 'invalid-display',
        messageId: 'NO_VALID_DISPLAY_FOUND_NONE_FOR_LANG_OK',
        text:
          `There are no valid display names found for the code ${subject} for language(s) '${asked}'. The ` +
          `display is '${display}' which is a valid display for the default language`,
        path,
      };
    return {
      severity,
      code: 'invalid',
      txType: 'invalid-display',
      messageId: 'NO_VALID_DISPLAY_FOUND_NONE_FOR_LANG_ERR',
      text:
        `Wrong Display Name '${display}' for ${subject}. There are no valid display names found for ` +
        `language(s) '${asked}'. Default display is '${fallback}'`,
      path,
    };
  }
  const normal = (s: string) => s.trim().replace(/\s+/g, ' ').toLowerCase();
  const ws = matching.some((c) => normal(c.value) === normal(display));
  const listed = [...new Map(matching.map((c) => [`${c.value}\u0000${c.language ?? ''}`, c])).values()];
  const shown = listed.map((c) => `'${c.value}'${c.language ? ` (${c.language})` : ''}`);
  const valid = shown.length === 1 ? shown[0] : `one of ${shown.length} choices: ${orList(shown)}`;
  return {
    severity,
    code: 'invalid',
    txType: 'invalid-display',
    messageId: ws
      ? 'Display_Name_WS_for__should_be_one_of__instead_of'
      : 'Display_Name_for__should_be_one_of__instead_of',
    text:
      `Wrong ${ws ? 'whitespace in ' : ''}Display Name '${display}' for ${subject}. ` +
      `Valid display is ${valid} (for the language(s) '${asked}')`,
    path,
  };
}

/** The issue for a code system nobody has. */
export function unknownSystem(system: string, path: string): ValidationIssue {
  return {
    severity: 'error',
    code: 'not-found',
    txType: 'not-found',
    messageId: 'UNKNOWN_CODESYSTEM',
    text: `A definition for CodeSystem '${system}' could not be found, so the code cannot be validated`,
    path,
  };
}

/** The issue for a Coding whose system is a supplement. */
export function supplementAsSystem(index: CodeSystemIndex, prefix: string): ValidationIssue {
  const canonical = index.version ? `${index.url}|${index.version}` : index.url;
  return {
    severity: 'error',
    code: 'invalid',
    txType: 'invalid-data',
    messageId: 'CODESYSTEM_CS_NO_SUPPLEMENT',
    text: `CodeSystem ${canonical} is a supplement, so can't be used as a value in Coding.system`,
    path: at(prefix, 'system'),
  };
}

/** The issue for a code system version nobody has. */
export function unknownVersion(
  system: string,
  version: string,
  versions: readonly string[],
  path: string,
): ValidationIssue {
  const known = [...new Set(versions)].sort((a, b) => compareVersionsDesc(b, a));
  return {
    severity: 'error',
    code: 'not-found',
    txType: 'not-found',
    messageId: known.length === 0 ? 'UNKNOWN_CODESYSTEM_VERSION_NONE' : 'UNKNOWN_CODESYSTEM_VERSION',
    text:
      known.length === 0
        ? `A definition for CodeSystem '${system}' version '${version}' could not be found, so the code cannot be ` +
          'validated. No versions of this code system are known'
        : `A definition for CodeSystem '${system}' version '${version}' could not be found, so the code cannot be ` +
          `validated. Valid versions: ${known.join(' or ')}`,
    path,
  };
}

/** `a`, `a or b`, `a, b or c`. */
export function orList(items: readonly string[]): string {
  return items.length <= 1
    ? (items[0] ?? '')
    : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

/** The value set uses another version of the code system than the Coding names: an error when the value set (or
 * a version parameter) names the version, a warning for a versionless include. */
export function versionMismatch(
  system: string,
  spec: VersionSpec | undefined,
  used: CodeSystemIndex,
  given: string,
  prefix: string,
): ValidationIssue {
  const path = at(prefix, 'version');
  if (spec?.viaParameter)
    return {
      severity: 'error',
      code: 'invalid',
      txType: 'vs-invalid',
      messageId: 'VALUESET_VALUE_MISMATCH_CHANGED',
      text:
        `The code system '${system}' version '${spec.effective?.[0] ?? ''}' resulting from the version ` +
        `'${spec.include ?? ''}' in the ValueSet include is different to the one in the value ('${given}')`,
      path,
    };
  if (spec?.include !== undefined)
    return {
      severity: 'error',
      code: 'invalid',
      txType: 'vs-invalid',
      messageId: 'VALUESET_VALUE_MISMATCH',
      text:
        `The code system '${system}' version '${spec.include}' in the ValueSet include is different to the one ` +
        `in the value ('${given}')`,
      path,
    };
  return {
    severity: 'warning',
    code: 'invalid',
    txType: 'vs-invalid',
    messageId: 'VALUESET_VALUE_MISMATCH_DEFAULT',
    text:
      `The code system '${system}' version '${used.version ?? ''}' for the versionless include in the ValueSet ` +
      `include is different to the one in the value ('${given}')`,
    path,
    quiet: true,
  };
}
