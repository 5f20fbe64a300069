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
    if (i < 0) return undefined;
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
