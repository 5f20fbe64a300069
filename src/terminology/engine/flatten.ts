// Flattens a FHIR CodeSystem resource into concept rows (document order) and index metadata.
import type { CodeSystemIndex } from './code-system-index.js';
import { CodeSystemIndexBuilder } from './index-builder.js';
import { attachConceptDetails, type ConceptDetails } from './concept-details.js';
import type { CodeSystemConcept, CodeSystemMeta, CodeSystemResource, ConceptInput } from './types.js';

/**
 * The nested `concept` tree of a CodeSystem as rows in document order (depth first, parent before children).
 * Parents come from nesting and from `parent` properties (and `child` properties of other concepts);
 * `status` from the `status` property (or `deprecated` -> 'deprecated'); inactive from `inactive`=true or
 * status inactive/retired; notSelectable from the `notSelectable` property. A property is known by its code or by
 * the FHIR concept-properties uri its declaration gives it (`not-selectable` declared with uri
 * `http://hl7.org/fhir/concept-properties#notSelectable` is notSelectable).
 */
export function flattenCodeSystemConcepts(
  cs: Pick<CodeSystemResource, 'concept' | 'property'>,
): ConceptInput[] {
  const rows: ConceptInput[] = [];
  for (const _ of flattenSteps(cs, rows));
  return rows;
}

/** Concepts visited between two steps of flattenSteps. */
export const FLATTEN_STEP = 2000;

/**
 * flattenCodeSystemConcepts in steps: fills `rows`, pausing (yielding) after every FLATTEN_STEP concepts, so a
 * caller can give the event loop a turn in between (a tree of 600,000 concepts takes several hundred ms).
 */
export function* flattenSteps(
  cs: Pick<CodeSystemResource, 'concept' | 'property'>,
  rows: ConceptInput[],
  /** Called for a `child` property naming a code not in `cs.concept` (the streamed import, which flattens one
   * top-level concept at a time, then cannot apply it). */
  onMissingChild?: (parent: string, child: string) => void,
): Generator<void, void, void> {
  const meaning = standardPropertyCodes(cs.property);
  const byCode = new Map<string, ConceptInput>();
  const childLinks: Array<[parent: string, child: string]> = [];

  const visit = (c: CodeSystemConcept, parent: string | undefined): void => {
    const parents: string[] = [];
    if (parent !== undefined) parents.push(parent);
    let status: string | undefined;
    let inactive = false;
    let notSelectable = false;
    let deprecated = false;
    for (const p of c.property ?? []) {
      switch (meaning.get(p.code) ?? p.code) {
        case 'parent': {
          const v = p.valueCode ?? p.valueCoding?.code ?? p.valueString;
          if (v !== undefined && !parents.includes(v)) parents.push(v);
          break;
        }
        case 'child': {
          const v = p.valueCode ?? p.valueCoding?.code ?? p.valueString;
          if (v !== undefined) childLinks.push([c.code, v]);
          break;
        }
        case 'status':
          status = p.valueCode ?? p.valueString ?? p.valueCoding?.code;
          break;
        case 'inactive':
          inactive = p.valueBoolean === true || p.valueCode === 'true' || p.valueString === 'true';
          break;
        case 'deprecated':
          deprecated = true;
          break;
        case 'notSelectable':
          notSelectable = p.valueBoolean === true || p.valueCode === 'true' || p.valueString === 'true';
          break;
      }
    }
    if (status === undefined && deprecated) status = 'deprecated';
    if (status === 'inactive' || status === 'retired') inactive = true;
    const existing = byCode.get(c.code);
    if (existing) {
      // The same code nested under several parents (polyhierarchy written as repetition): merge parents.
      for (const p of parents) if (!existing.parents!.includes(p)) existing.parents!.push(p);
    } else {
      const row: ConceptInput = {
        code: c.code,
        display: c.display ?? null,
        definition: c.definition ?? null,
        parents,
        notSelectable,
        inactive,
        status: status ?? null,
        designations: c.designation && c.designation.length > 0 ? c.designation : null,
        properties: c.property && c.property.length > 0 ? c.property : null,
        extensions: Array.isArray(c.extension) && c.extension.length > 0 ? c.extension : null,
      };
      rows.push(row);
      byCode.set(c.code, row);
    }
  };
  // Depth first, parent before children, without recursion (callers validate depth; this must not overflow).
  const stack: Array<{ list: CodeSystemConcept[]; i: number; parent: string | undefined }> = [];
  if (cs.concept) stack.push({ list: cs.concept, i: 0, parent: undefined });
  let visited = 0;
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top.i >= top.list.length) {
      stack.pop();
      continue;
    }
    const c = top.list[top.i++];
    visit(c, top.parent);
    if (c.concept && c.concept.length > 0) stack.push({ list: c.concept, i: 0, parent: c.code });
    if (++visited % FLATTEN_STEP === 0) yield;
  }

  for (const [parent, child] of childLinks) {
    const row = byCode.get(child);
    if (!row) onMissingChild?.(parent, child);
    else if (!row.parents!.includes(parent)) row.parents!.push(parent);
  }
}

/** The index metadata of a CodeSystem resource (id/versionId from the resource unless given). */
export function codeSystemMetaOf(
  cs: CodeSystemResource,
  id?: string,
  versionId?: string | number,
): CodeSystemMeta {
  if (!cs.url) throw new Error('CodeSystem has no url');
  return {
    url: cs.url,
    version: cs.version,
    id: id ?? cs.id,
    versionId: versionId ?? cs.meta?.versionId,
    name: cs.name,
    content: cs.content,
    ...(typeof cs.supplements === 'string' ? { supplements: cs.supplements } : {}),
    hierarchyMeaning: cs.hierarchyMeaning,
    caseSensitive: cs.caseSensitive,
    language: cs.language,
    properties: cs.property?.map((p) => ({ code: p.code, type: p.type, uri: p.uri })),
    warnings: statusWarnings(cs),
  };
}

const STANDARDS_STATUS = 'http://hl7.org/fhir/StructureDefinition/structuredefinition-standards-status';

const CONCEPT_PROPERTIES = 'http://hl7.org/fhir/concept-properties#';
const STANDARD_PROPERTIES = new Set(['parent', 'child', 'status', 'inactive', 'deprecated', 'notSelectable']);

/** Declared property code -> the standard property its uri names (only codes that differ from it). */
function standardPropertyCodes(declared: CodeSystemResource['property']): Map<string, string> {
  const out = new Map<string, string>();
  for (const d of declared ?? []) {
    if (!d.uri?.startsWith(CONCEPT_PROPERTIES)) continue;
    const name = d.uri.slice(CONCEPT_PROPERTIES.length);
    if (STANDARD_PROPERTIES.has(name) && name !== d.code) out.set(d.code, name);
  }
  return out;
}

/** The `warning-*` reasons of a CodeSystem or ValueSet (undefined when none): status draft, experimental, and a
 * standards-status of deprecated or withdrawn (the HL7 terminology ecosystem IG's expansion warnings). */
export function statusWarnings(r: {
  status?: unknown;
  experimental?: unknown;
  extension?: unknown;
}): string[] | undefined {
  const out: string[] = [];
  if (Array.isArray(r.extension)) {
    for (const e of r.extension as Array<{ url?: unknown; valueCode?: unknown }>) {
      if (e?.url === STANDARDS_STATUS && (e.valueCode === 'deprecated' || e.valueCode === 'withdrawn'))
        out.push(e.valueCode);
    }
  }
  if (r.status === 'draft') out.push('draft');
  if (r.experimental === true) out.push('experimental');
  return out.length > 0 ? out : undefined;
}

/** Indexes a whole CodeSystem resource held in memory (a request's tx-resource, a test's), keeping its concepts'
 * definitions and extensions with the index (concept-details.ts). */
export function indexCodeSystemResource(cs: CodeSystemResource): CodeSystemIndex {
  const rows = flattenCodeSystemConcepts(cs);
  const index = CodeSystemIndexBuilder.build(codeSystemMetaOf(cs), rows);
  const details = new Map<number, ConceptDetails>();
  for (const r of rows) {
    if (!r.definition && !r.extensions) continue;
    const d: ConceptDetails = {};
    if (r.definition) d.definition = r.definition;
    if (r.extensions) d.extension = r.extensions;
    details.set(index.ordinalOf(r.code), d);
  }
  attachConceptDetails(index, details);
  return index;
}
