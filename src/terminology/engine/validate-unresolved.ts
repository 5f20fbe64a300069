// The $validate-code answer for a value set that cannot be evaluated because something it names is missing (an
// imported value set, a code system or version): `false`, with the IG's issue, as the reference servers answer,
// rather than an error status.
import type { CodingValue } from './parameters.js';
import type { ParametersParameter, ParametersResource } from './lookup.js';
import type { Resolver } from './resolver.js';
import { at, toIssue, versionMismatch, type CheckedForm, type ValidationIssue } from './validate-issues.js';
import { resolveCodeSystem } from './versions.js';

/** The answer when the value set cannot be evaluated because something it names is missing (an imported value
 * set, a code system or version): `false`, with the IG's issue, rather than an error status. Undefined when the
 * error is not one of those. */
export async function unresolvedValueSetAnswer(
  form: CheckedForm,
  codings: readonly CodingValue[],
  message: string,
  resolver: Resolver,
  codeableConcept?: unknown,
  fallbackVersions: ReadonlyMap<string, string> = new Map(),
  valueSet: { url?: string; version?: string } = {},
): Promise<ParametersResource | undefined> {
  const out: ParametersParameter[] = [];
  const issues: ValidationIssue[] = [];
  const vsMatch = /^Unable to find included value set '([^']*)'(?: version '([^']*)')?/.exec(message);
  const csMatch = /^A definition for CodeSystem '([^']*)'(?: version '([^']*)')? could not be found/.exec(
    message,
  );
  if (vsMatch) {
    const [, url, version] = vsMatch;
    const text = `A definition for the value Set '${url}${version !== undefined ? `|${version}` : ''}' could not be found`;
    issues.push({
      severity: 'error',
      code: 'not-found',
      txType: 'not-found',
      messageId: 'Unable_to_resolve_value_Set_',
      text,
    });
  } else if (csMatch) {
    const [, url, version] = csMatch;
    const i = codings.findIndex((c) => c.system === url);
    if (i < 0) return await otherUnknownSystem(form, codings, resolver, valueSet);
    const coding = codings[i];
    const prefix = form === 'code' ? '' : form === 'coding' ? 'Coding' : `CodeableConcept.coding[${i}]`;
    issues.push({
      severity: 'error',
      code: 'not-found',
      txType: 'not-found',
      messageId: version === undefined ? 'UNKNOWN_CODESYSTEM' : 'UNKNOWN_CODESYSTEM_VERSION',
      text: message.replace('so the value set cannot be expanded', 'so the code cannot be validated'),
      path: at(prefix, 'system'),
    });
    // What the code is in the version the Coding names (else the latest), when there is one.
    const index = await resolveCodeSystem(resolver, url, coding.version ?? fallbackVersions.get(url)).catch(
      () => undefined,
    );
    if (version !== undefined && coding.version !== undefined && coding.version !== version && index)
      issues.push(
        versionMismatch(
          url,
          { include: version, effective: [version], viaParameter: false },
          index,
          coding.version,
          prefix,
        ),
      );
    const ord = index && coding.code !== undefined ? index.lookupCode(coding.code) : -1;
    // A CodeableConcept's answer names no code or system (no coding is valid); a Coding's does.
    if (coding.code !== undefined && form !== 'codeableConcept')
      out.push({ name: 'code', valueCode: coding.code });
    if (index && ord >= 0 && index.display(ord) !== undefined)
      out.push({ name: 'display', valueString: index.display(ord) });
    if (form !== 'codeableConcept') out.push({ name: 'system', valueUri: url });
    if (index?.version !== undefined) out.push({ name: 'version', valueString: index.version });
    out.push({ name: 'x-caused-by-unknown-system', valueCanonical: version ? `${url}|${version}` : url });
  } else {
    return undefined;
  }
  if (form === 'codeableConcept' && codeableConcept !== undefined)
    out.push({ name: 'codeableConcept', valueCodeableConcept: codeableConcept });
  out.push({ name: 'result', valueBoolean: false });
  out.push({ name: 'message', valueString: issues.map((i) => i.text).join('; ') });
  out.push({ name: 'issues', resource: { resourceType: 'OperationOutcome', issue: issues.map(toIssue) } });
  return { resourceType: 'Parameters', parameter: out };
}

/** The answer when the value set names a missing code system and the code is of another system nobody has either:
 * not in the value set, and its own system unknown (as the IG's errors/unknown-system2 expects). Undefined when the
 * code's system is known (the value set's missing part then decides: an error) or the form is a CodeableConcept. */
async function otherUnknownSystem(
  form: CheckedForm,
  codings: readonly CodingValue[],
  resolver: Resolver,
  valueSet: { url?: string; version?: string },
): Promise<ParametersResource | undefined> {
  const coding = codings[0];
  if (form === 'codeableConcept' || codings.length !== 1 || !coding.system || coding.code === undefined)
    return undefined;
  const known = await resolveCodeSystem(resolver, coding.system, coding.version).catch(() => undefined);
  if (known) return undefined;
  const prefix = form === 'code' ? '' : 'Coding';
  const vs = `${valueSet.url ?? ''}${valueSet.version !== undefined ? `|${valueSet.version}` : ''}`;
  const issues: ValidationIssue[] = [
    {
      severity: 'error',
      code: 'code-invalid',
      txType: 'not-in-vs',
      messageId: 'None_of_the_provided_codes_are_in_the_value_set_one',
      text: `The provided code '${coding.system}#${coding.code}' was not found in the value set '${vs}'`,
      path: at(prefix, 'code'),
    },
    {
      severity: 'error',
      code: 'not-found',
      txType: 'not-found',
      messageId: 'UNKNOWN_CODESYSTEM',
      // Unquoted, as the IG's reference server words it when the system is the request's own.
      text: `A definition for CodeSystem ${coding.system} could not be found, so the code cannot be validated`,
      path: at(prefix, 'system'),
    },
  ];
  return {
    resourceType: 'Parameters',
    parameter: [
      { name: 'code', valueCode: coding.code },
      { name: 'system', valueUri: coding.system },
      { name: 'x-unknown-system', valueCanonical: coding.system },
      { name: 'result', valueBoolean: false },
      { name: 'message', valueString: issues.map((i) => i.text).join('; ') },
      { name: 'issues', resource: { resourceType: 'OperationOutcome', issue: issues.map(toIssue) } },
    ],
  };
}
