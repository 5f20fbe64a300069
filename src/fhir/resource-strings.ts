// Every string of a resource written, and every property name, checked before it reaches the database: well-formed
// Unicode (a lone surrogate such as "\ud800" is valid JSON, but PostgreSQL's jsonb refuses it: the write answered
// 500), no NUL (text cannot hold it), at most FHIR's 1 MB per string; and the elements the database indexes
// (url, identifier.system and .value) at most INDEXED_MAX_BYTES, as a btree row cannot hold more (a 5,000-character
// url answered 500). Each is a 400 naming the element. The walk gives the event loop turns on big resources.
import { ApiError, badRequest } from '../core/errors.js';
import { yieldIfHeld } from '../core/turns.js';

/** FHIR R4 (datatypes, string): strings SHALL NOT exceed 1 MB. Counted in UTF-16 units, a bound of the bytes. */
export const STRING_MAX_LENGTH = 1024 * 1024;

/** The most UTF-8 bytes of an indexed element (url, identifier.system/.value, CodeSystem concept codes): PostgreSQL's
 * btree rows hold at most 2,704 bytes, and an identifier's system and value share one. */
export const INDEXED_MAX_BYTES = 1024;

/** Nodes walked between two chances to give the event loop a turn. */
const STEP = 4096;

/** A frame of the walk: an object's entries or an array's items, and where they are. */
interface Frame {
  path: string;
  keys: string[] | null;
  values: unknown[];
  i: number;
  /** Whether its values count towards the resource's size (a CodeSystem's concepts do not). */
  counted: boolean;
}

/** String.prototype.isWellFormed: in every supported Node (20+), not yet in the TypeScript lib this project targets. */
type WellFormedCheck = string & { isWellFormed(): boolean };

/** Why `s` cannot be stored, or undefined when it can. */
function stringProblem(s: string): string | undefined {
  if (s.length > STRING_MAX_LENGTH) return `is longer than FHIR's 1 MB limit for a string`;
  if (!(s as WellFormedCheck).isWellFormed()) return 'is not well-formed Unicode (it holds a lone surrogate)';
  if (s.includes('\u0000')) return 'holds the NUL character (\\u0000)';
  return undefined;
}

/** True when `s` is longer than INDEXED_MAX_BYTES in UTF-8. */
export function overIndexLimit(s: string): boolean {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short strings need no count.
  return s.length * 3 > INDEXED_MAX_BYTES && Buffer.byteLength(s) > INDEXED_MAX_BYTES;
}

/** The message of a 400 for an indexed element over the limit. */
export function indexLimitMessage(path: string): string {
  return `${path} is longer than ${INDEXED_MAX_BYTES} bytes, the most the server indexes`;
}

/** Whether `path` (from the resource root) names an element the database indexes. */
function indexed(path: string, type: string): boolean {
  return path === `${type}.url` || /^[A-Za-z]+\.identifier\[\d+\]\.(system|value)$/.test(path);
}

/** What one stored resource may hold, without a CodeSystem's concepts (RESOURCE_MAX_CHARS, RESOURCE_MAX_ELEMENTS). */
export interface ResourceBudget {
  /** Characters of JSON. */
  maxChars: number;
  /** Elements: every property value and array item, nested ones included. */
  maxElements: number;
}

const UNBOUNDED: ResourceBudget = { maxChars: Infinity, maxElements: Infinity };

/** 400 naming the element when a string of `resource` cannot be stored (see the file comment); 422 when the
 * resource, without a CodeSystem's concepts (stored as rows, bounded by BODY_LIMIT and the large-request budget), is
 * longer than `budget.maxChars` characters of JSON or holds more than `budget.maxElements` elements: every read of it
 * is parsed and serialised whole, and every write checked against the definition in one pass. */
export async function checkResourceStrings(
  resource: Record<string, unknown>,
  type: string,
  budget: ResourceBudget = UNBOUNDED,
): Promise<void> {
  const { maxChars, maxElements } = budget;
  let elements = 0;
  const stack: Frame[] = [
    { path: type, keys: Object.keys(resource), values: Object.values(resource), i: 0, counted: true },
  ];
  let walked = 0;
  let chars = 2;
  const conceptsPath = type === 'CodeSystem' ? 'CodeSystem.concept' : '';
  while (stack.length > 0) {
    if (++walked % STEP === 0) {
      const t = yieldIfHeld();
      if (t) await t;
    }
    const top = stack[stack.length - 1];
    if (top.i >= top.values.length) {
      stack.pop();
      continue;
    }
    const k = top.i++;
    const key = top.keys?.[k];
    if (key !== undefined) {
      const problem = stringProblem(key);
      if (problem) throw badRequest(`A property name in ${top.path} ${problem}`, [top.path]);
    }
    const path = key !== undefined ? `${top.path}.${key}` : `${top.path}[${k}]`;
    const v = top.values[k];
    const counted = top.counted && path !== conceptsPath;
    if (counted) {
      // Roughly the JSON text: the key and its quotes and colon, a comma, the value (strings with their quotes).
      chars += (key === undefined ? 1 : key.length + 4) + (typeof v === 'string' ? v.length + 2 : 2);
      if (chars > maxChars) throw tooLarge(type, maxChars);
      if (++elements > maxElements) throw tooManyElements(type, maxElements);
    }
    if (typeof v === 'string') {
      const problem = stringProblem(v);
      if (problem) throw badRequest(`${path} ${problem}`, [path]);
      if (overIndexLimit(v) && indexed(path, type)) throw badRequest(indexLimitMessage(path), [path]);
    } else if (Array.isArray(v)) {
      stack.push({ path, keys: null, values: v, i: 0, counted });
    } else if (v !== null && typeof v === 'object') {
      stack.push({ path, keys: Object.keys(v), values: Object.values(v), i: 0, counted });
    }
  }
}

/** The 422 for a resource over RESOURCE_MAX_ELEMENTS. */
function tooManyElements(type: string, maxElements: number): ApiError {
  return new ApiError(
    422,
    'too-costly',
    `The ${type} holds more than ${maxElements} elements${type === 'CodeSystem' ? ' without its concepts' : ''} ` +
      `(RESOURCE_MAX_ELEMENTS): every write of it is checked against its definition in one pass`,
    { expression: [type] },
  );
}

/** The 422 for a resource over RESOURCE_MAX_CHARS. */
function tooLarge(type: string, maxChars: number): ApiError {
  return new ApiError(
    422,
    'too-costly',
    `The ${type} is longer than ${maxChars} characters of JSON${type === 'CodeSystem' ? ' without its concepts' : ''} ` +
      `(RESOURCE_MAX_CHARS): it is written and read whole`,
    { expression: [type] },
  );
}
