// What the official runner does to a response before comparing it: TxTesterScrubbers (drop text, meta and
// extensions it does not manage; OperationOutcome: drop issues with diagnostics but no details, then every
// diagnostics), TxTesterSorters.sortValueSet (expansion parameters, properties, extensions and contains sorted) and
// TxTesterSorters.sortParameters ($lookup's answer: parameters and their parts sorted). $validate-code answers are
// scrubbed as the current runner's scrubParameters does (only the OperationOutcome of `issues` loses its
// unmanaged extensions and diagnostics; `diagnostics` parameters go) and sorted as its sortParameters does (issues
// by severity, code, expression and text; the `; `-separated parts of `message`).
import type { Json } from './compare.js';

type Obj = { [k: string]: Json | undefined };
const isObject = (v: Json | undefined): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Extensions the runner keeps when not "tight" (TxTesterScrubbers.isManagedExtension). */
const MANAGED_EXTENSIONS = new Set([
  'http://hl7.org/fhir/StructureDefinition/codesystem-alternate',
  'http://hl7.org/fhir/StructureDefinition/codesystem-conceptOrder',
  'http://hl7.org/fhir/StructureDefinition/codesystem-label',
  'http://hl7.org/fhir/StructureDefinition/coding-sctdescid',
  'http://hl7.org/fhir/StructureDefinition/itemWeight',
  'http://hl7.org/fhir/StructureDefinition/rendering-style',
  'http://hl7.org/fhir/StructureDefinition/rendering-xhtml',
  'http://hl7.org/fhir/StructureDefinition/translation',
  'http://hl7.org/fhir/StructureDefinition/valueset-concept-definition',
  'http://hl7.org/fhir/StructureDefinition/valueset-conceptOrder',
  'http://hl7.org/fhir/StructureDefinition/valueset-deprecated',
  'http://hl7.org/fhir/StructureDefinition/valueset-label',
  'http://hl7.org/fhir/StructureDefinition/valueset-supplement',
  'http://hl7.org/fhir/test/CodeSystem/de-multi',
  'http://hl7.org/fhir/test/CodeSystem/en-multi',
  'http://hl7.org/fhir/test/StructureDefinition/unknown-extension-1',
  'http://hl7.org/fhir/test/StructureDefinition/unknown-extension-3',
  'http://hl7.org/fhir/test/StructureDefinition/unknown-extension-4',
  'http://hl7.org/fhir/test/StructureDefinition/unknown-extension-5',
  'http://hl7.org/fhir/test/ValueSet/extensions-bad-supplement',
  'http://hl7.org/fhir/test/ValueSet/simple-all',
  'http://hl7.org/fhir/test/ValueSet/simple-enumerated',
  'http://hl7.org/fhir/StructureDefinition/alternate-code-use',
  'http://hl7.org/fhir/StructureDefinition/alternate-code-status',
  'http://hl7.org/fhir/test/ValueSet/simple-filter-isa',
  // Not in the scrubber's list as stored in hapifhir/org.hl7.fhir.core, but required by the IG's expected files
  // (standards-status: vs-deprecation, extensions-echo-*, parameters-expand-enum-definitions3; unclosed:
  // fragment-expansion), which the reference servers pass (FHIRsmith: "passed all 3585 HL7 terminology service
  // tests", runner 6.10.4): the current runner keeps them.
  'http://hl7.org/fhir/StructureDefinition/structuredefinition-standards-status',
  'http://hl7.org/fhir/StructureDefinition/valueset-unclosed',
  'http://hl7.org/fhir/StructureDefinition/valueset-unclosed-reason',
  'http://hl7.org/fhir/StructureDefinition/operationoutcome-message-id',
]);

function managed(ext: Json | undefined): boolean {
  const url = isObject(ext) && typeof ext.url === 'string' ? ext.url : '';
  return !/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(url) || MANAGED_EXTENSIONS.has(url);
}

/** Removes unmanaged extensions at every level (the compose's children are left alone, as the runner does). */
function scrubExtensions(node: Json | undefined, key = ''): void {
  if (Array.isArray(node)) {
    for (const e of node) scrubExtensions(e, key);
    return;
  }
  if (!isObject(node)) return;
  for (const k of ['extension', 'modifierExtension']) {
    const ext = node[k];
    if (Array.isArray(ext)) {
      const kept = ext.filter(managed);
      if (kept.length > 0) node[k] = kept;
      else delete node[k];
    }
  }
  if (key === 'compose') return;
  for (const k of Object.keys(node))
    if (k !== 'extension' && k !== 'modifierExtension') scrubExtensions(node[k], k);
}

/** The primitive value of a parameter, as Java's primitiveValue() prints it. */
function primitiveValue(p: Obj): string {
  for (const k of Object.keys(p)) if (k.startsWith('value')) return String(p[k]);
  return '';
}

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const str = (v: Json | undefined) => (typeof v === 'string' ? v : '');

function sortArray(o: Obj, key: string, cmp: (a: Obj, b: Obj) => number): void {
  const arr = o[key];
  // Array.prototype.sort is stable, like Java's Collections.sort.
  if (Array.isArray(arr)) arr.sort((a, b) => (isObject(a) && isObject(b) ? cmp(a, b) : 0));
}

const extensionOrder = (a: Obj, b: Obj) => byString(str(a.url), str(b.url));

function sortContains(c: Obj): void {
  sortArray(c, 'contains', (a, b) => byString(str(a.code), str(b.code)));
  sortArray(c, 'extension', extensionOrder);
  sortArray(c, 'designation', (a, b) =>
    a.language !== undefined && b.language !== undefined
      ? byString(str(a.language), str(b.language))
      : byString(str(a.value), str(b.value)),
  );
  sortArray(c, 'property', (a, b) => byString(str(a.code), str(b.code)));
  const children = c.contains;
  if (Array.isArray(children)) for (const ch of children) if (isObject(ch)) sortContains(ch);
}

/** A part of a parameter by name (Parameters.parameter.getPart: the first). */
const partOf = (p: Obj, name: string): Obj | undefined =>
  Array.isArray(p.part) ? p.part.find((x): x is Obj => isObject(x) && x.name === name) : undefined;

/** The lowercased primitive value of a part, or null (no part, or no primitive value). */
function partValue(p: Obj, name: string): string | null {
  const part = partOf(p, name);
  if (!part) return null;
  for (const k of Object.keys(part)) {
    const v = part[k];
    if (k.startsWith('value') && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'))
      return String(v).toLowerCase();
  }
  return null;
}

/** TxTesterSorters.ParameterSorter: `property` parameters by code then value, `designation` ones by language, all
 * by name; parts sorted the same way, recursively. */
function compareParameters(a: Obj, b: Obj): number {
  const na = str(a.name);
  const nb = str(b.name);
  if (na === nb && na === 'property') {
    const ca = partValue(a, 'code') ?? '';
    const cb = partValue(b, 'code') ?? '';
    if (ca !== cb) return byString(ca, cb);
    const va = partValue(a, 'value');
    const vb = partValue(b, 'value');
    if (va !== null && vb !== null && va !== vb) return byString(va, vb);
  }
  if (na === nb && na === 'designation') {
    // The runner then compares values only where the part itself has a primitive value (a part never has):
    // designations of one language keep their order.
    const la = partValue(a, 'language') ?? '';
    const lb = partValue(b, 'language') ?? '';
    if (la !== lb) return byString(la, lb);
  }
  return byString(na, nb);
}

/** TxTesterSorters.sortParameters: the parameters, their parts (recursively) and extensions, in place. */
function sortParameterList(list: Json | undefined): void {
  if (!Array.isArray(list)) return;
  for (const p of list) {
    if (!isObject(p)) continue;
    sortArray(p, 'extension', extensionOrder);
    sortParameterList(p.part);
    if (isObject(p.resource) && p.resource.resourceType === 'Parameters')
      sortParameterList(p.resource.parameter);
  }
  list.sort((a, b) => (isObject(a) && isObject(b) ? compareParameters(a, b) : 0));
}

/** TxTesterScrubbers.scrubOperationOutcome: no text, meta or unmanaged extensions; issues with diagnostics and no
 * details dropped; diagnostics dropped unless they name the X-Request-Id. */
function scrubOperationOutcome(oo: Obj): void {
  delete oo.text;
  delete oo.meta;
  scrubExtensions(oo);
  if (!Array.isArray(oo.issue)) return;
  oo.issue = oo.issue.filter((i) => !(isObject(i) && i.diagnostics !== undefined && i.details === undefined));
  for (const i of oo.issue)
    if (
      isObject(i) &&
      typeof i.diagnostics === 'string' &&
      !i.diagnostics.toLowerCase().includes('x-request-id')
    )
      delete i.diagnostics;
}

/** TxTesterScrubbers.scrubParameters. */
function scrubParameters(po: Obj): void {
  delete po.meta;
  if (!Array.isArray(po.parameter)) return;
  po.parameter = po.parameter.filter((p) => !(isObject(p) && p.name === 'diagnostics'));
  for (const p of po.parameter) {
    if (!isObject(p) || !isObject(p.resource)) continue;
    const r = p.resource;
    if (r.resourceType === 'OperationOutcome') scrubOperationOutcome(r);
    else if (r.resourceType === 'Parameters') scrubParameters(r);
    else if (r.resourceType === 'ValueSet') {
      delete r.text;
      delete r.meta;
      scrubExtensions(r);
    }
  }
}

/** TxTesterSorters.OperationIssueSorter: by severity, code, first expression, details.text. */
function compareIssues(a: Obj, b: Obj): number {
  const expr = (o: Obj) => (Array.isArray(o.expression) ? str(o.expression[0]) : '');
  const text = (o: Obj) => (isObject(o.details) ? str(o.details.text) : '');
  return (
    byString(str(a.severity), str(b.severity)) ||
    byString(str(a.code), str(b.code)) ||
    byString(expr(a), expr(b)) ||
    byString(text(a), text(b))
  );
}

/** The current TxTesterSorters.sortParameters: parameters and parts as before, then the issues of an
 * OperationOutcome parameter, and the `; `-separated parts of `message`. */
function sortValidateParameters(list: Json | undefined): void {
  sortParameterList(list);
  if (!Array.isArray(list)) return;
  for (const p of list) {
    if (!isObject(p)) continue;
    const r = p.resource;
    if (isObject(r) && r.resourceType === 'OperationOutcome') sortArray(r, 'issue', compareIssues);
    if (isObject(r) && r.resourceType === 'Parameters') sortValidateParameters(r.parameter);
    if (p.name === 'message' && typeof p.valueString === 'string' && p.valueString.includes('; '))
      p.valueString = p.valueString.split('; ').sort().join('; ');
  }
}

/** The operations whose answers the runner scrubs with scrubParameters (the current runner's way). */
const VALIDATE_OPERATIONS: ReadonlySet<string> = new Set([
  'validate-code',
  'cs-validate-code',
  'batch-validate',
  'translate',
]);

/** Applies the runner's scrubbing and sorting to a response body (in place) and returns it. */
export function normalizeResponse(body: Json, operation = 'expand'): Json {
  if (!isObject(body)) return body;
  if (VALIDATE_OPERATIONS.has(operation)) {
    if (body.resourceType === 'Parameters') {
      scrubParameters(body);
      sortValidateParameters(body.parameter);
      return body;
    }
    if (body.resourceType === 'OperationOutcome') {
      scrubOperationOutcome(body);
      return body;
    }
  }
  delete body.text;
  delete body.meta;
  scrubExtensions(body);
  if (body.resourceType === 'OperationOutcome' && Array.isArray(body.issue)) {
    body.issue = body.issue.filter(
      (i) => !(isObject(i) && i.diagnostics !== undefined && i.details === undefined),
    );
    for (const i of body.issue) if (isObject(i)) delete i.diagnostics;
  }
  if (body.resourceType === 'Parameters') sortParameterList(body.parameter);
  if (body.resourceType === 'ValueSet') {
    sortArray(body, 'extension', extensionOrder);
    const exp = body.expansion;
    if (isObject(exp)) {
      sortArray(
        exp,
        'parameter',
        (a, b) => byString(str(a.name), str(b.name)) || byString(primitiveValue(a), primitiveValue(b)),
      );
      sortArray(
        exp,
        'property',
        (a, b) => byString(str(a.uri), str(b.uri)) || byString(str(a.code), str(b.code)),
      );
      sortArray(exp, 'extension', extensionOrder);
      sortArray(exp, 'contains', (a, b) => byString(str(a.code), str(b.code)));
      const contains = exp.contains;
      if (Array.isArray(contains)) for (const c of contains) if (isObject(c)) sortContains(c);
    }
  }
  return body;
}

/** What the runner does to the server's CapabilityStatement and TerminologyCapabilities before its pattern
 * comparison: no scrubbing (TxTesterScrubbers.scrubCapStmt/scrubTermCaps are empty), the lists sorted
 * (TxTesterSorters.sortCapStmt/sortTermCaps). */
export function normalizeCapabilities(body: Json): Json {
  if (!isObject(body)) return body;
  const strings = (o: Obj, key: string) => {
    const arr = o[key];
    if (Array.isArray(arr)) arr.sort((a, b) => byString(str(a), str(b)));
  };
  const byKey = (k: string) => (a: Obj, b: Obj) => byString(str(a[k]), str(b[k]));
  if (body.resourceType === 'CapabilityStatement') {
    for (const k of ['format', 'instantiates', 'imports', 'acceptLanguage']) strings(body, k);
    sortArray(body, 'rest', byKey('mode'));
    for (const r of Array.isArray(body.rest) ? body.rest : []) {
      if (!isObject(r)) continue;
      sortArray(r, 'resource', byKey('type'));
      for (const res of Array.isArray(r.resource) ? r.resource : []) {
        if (!isObject(res)) continue;
        strings(res, 'supportedProfile');
        strings(res, 'searchInclude');
        strings(res, 'searchRevInclude');
        sortArray(res, 'interaction', byKey('code'));
        sortArray(res, 'searchParam', byKey('name'));
        sortArray(res, 'operation', byKey('name'));
      }
      sortArray(r, 'interaction', byKey('code'));
      sortArray(r, 'searchParam', byKey('name'));
      sortArray(r, 'operation', byKey('name'));
      strings(r, 'compartment');
    }
  } else if (body.resourceType === 'TerminologyCapabilities') {
    sortArray(body, 'codeSystem', byKey('uri'));
    for (const cs of Array.isArray(body.codeSystem) ? body.codeSystem : []) {
      if (!isObject(cs)) continue;
      sortArray(cs, 'version', byKey('code'));
      for (const v of Array.isArray(cs.version) ? cs.version : []) {
        if (!isObject(v)) continue;
        strings(v, 'language');
        strings(v, 'property');
        sortArray(v, 'filter', byKey('code'));
      }
    }
    if (isObject(body.expansion)) sortArray(body.expansion, 'parameter', byKey('name'));
  }
  return body;
}
