// Stored CodeSystems and ValueSets come from the database as JSON text and are parsed here, not by the driver, so a
// big one costs the caller's budget before the work is done: rows over LARGE_BODY_BYTES together (one big
// resource, or a search page of many) are a large request (a place of LARGE_REQUESTS_*, 429 when none is free),
// parsed in steps, and, when the caller streams its answer (REST), their long arrays are marked for the streaming
// writer, which serialises them item by item with turns for the event loop. Four reads at once of a 3.8 MB
// ValueSet held the loop 410 ms, parsed by the driver and serialised whole.
import { parseJsonInSteps } from '../core/json-in-steps.js';
import { LARGE_BODY_BYTES, type LargeRequests } from '../fhir/large-requests.js';
import { holdingLazy } from '../fhir/lazy-json.js';

/** Arrays at least this long are serialised item by item when streamed. */
const LONG_ARRAY = 256;

/** How deep the marking looks for long arrays (ValueSet.compose.include[].concept is at depth 4). */
const MARK_DEPTH = 5;

/** Stored JSON is written under JSON_MAX_DEPTH; this only keeps the parser's own check quiet. */
const STORED_MAX_DEPTH = 100_000;

/** Text of a stored resource (`resource::text`), or the object a driver made of it. */
type StoredJson = string | Record<string, unknown>;

/** Parses stored JSON texts (see the file comment); `large` says whether they were a large request (then mark the
 * resources made of them with markForStreaming when the answer streams). `what` names the read in a 429. */
export async function parseStoredRows(
  texts: StoredJson[],
  opts: { large: LargeRequests; projectId: string | null; what: string },
): Promise<{ values: Record<string, unknown>[]; large: boolean }> {
  const chars = texts.reduce((n, t) => n + (typeof t === 'string' ? t.length : 0), 0);
  if (chars <= LARGE_BODY_BYTES) {
    return { values: texts.map((t) => (typeof t === 'string' ? JSON.parse(t) : t)), large: false };
  }
  const release = opts.large.acquire(opts.projectId, `${opts.what} (${chars} characters of stored JSON)`);
  try {
    const out: Record<string, unknown>[] = [];
    for (const t of texts) {
      const value =
        typeof t === 'string'
          ? ((await parseJsonInSteps(Buffer.from(t, 'utf8'), STORED_MAX_DEPTH, {
              tooDeep: () => new Error('stored JSON nested too deep'),
            })) as Record<string, unknown>)
          : t;
      out.push(value);
    }
    return { values: out, large: true };
  } finally {
    release();
  }
}

/** Marks a resource's long arrays for the streaming writer (REST), which then serialises them item by item. */
export function markForStreaming(resource: object): void {
  markLongArrays(resource, MARK_DEPTH);
}

/** Marks long arrays, and the objects and arrays on the way to them, for the streaming writer; true when any was. */
function markLongArrays(value: unknown, depth: number): boolean {
  if (typeof value !== 'object' || value === null || depth < 0) return false;
  let marked = Array.isArray(value) && value.length >= LONG_ARRAY;
  const children = Array.isArray(value) ? (marked ? [] : value) : Object.values(value);
  for (const child of children) if (markLongArrays(child, depth - 1)) marked = true;
  if (marked) holdingLazy(value);
  return marked;
}
