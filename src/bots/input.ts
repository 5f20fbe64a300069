// event.input from the request body, by Content-Type. Parameters (charset, ...) are ignored; unknown types are 415.
// JSON is parsed in steps that give the event loop turns, as large FHIR bodies are (1 MiB of small objects,
// BOT_INPUT_LIMIT's default, took 30 ms in one JSON.parse on a loaded machine), with JSON_MAX_DEPTH as for every
// JSON body.
import { ApiError, badRequest } from '../core/errors.js';
import { HL7_V2 } from '../core/media-type.js';
import { JsonStepsSyntaxError, parseJsonInSteps } from '../core/json-in-steps.js';
import { checkHl7Message } from './hl7/check.js';

export const SUPPORTED_TYPES = [
  'text/plain',
  'application/json',
  'application/x-www-form-urlencoded',
  'application/fhir+json',
  HL7_V2,
] as const;

/** Parses a body into what the bot sees as event.input (HL7 is only checked here: the isolate parses it);
 * `maxDepth` (JSON_MAX_DEPTH) bounds the nesting of JSON parsed in steps. */
export async function parseInput(contentType: string, body: string, maxDepth: number): Promise<unknown> {
  switch (contentType) {
    case 'text/plain':
      return body;
    case 'application/json': {
      const v = await parseJson(body, maxDepth);
      if (v === null || typeof v !== 'object')
        throw badRequest('application/json input must be a JSON object or array');
      return v;
    }
    case 'application/fhir+json': {
      const v = await parseJson(body, maxDepth);
      if (v === null || typeof v !== 'object' || Array.isArray(v))
        throw badRequest('application/fhir+json input must be a FHIR resource (a JSON object)');
      if (typeof (v as { resourceType?: unknown }).resourceType !== 'string')
        throw badRequest('application/fhir+json input has no resourceType', ['resourceType']);
      return v;
    }
    case 'application/x-www-form-urlencoded': {
      // Repeated keys: the last value wins (documented in docs/bots.md).
      const out: Record<string, string> = {};
      for (const [k, v] of new URLSearchParams(body)) out[k] = v;
      return out;
    }
    case HL7_V2: {
      try {
        checkHl7Message(body);
      } catch (err) {
        throw badRequest(
          `Input is not an HL7 v2 message: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      return body;
    }
    default:
      throw new ApiError(
        415,
        'not-supported',
        `Unsupported Content-Type ${contentType || '(none)'}; use one of ${SUPPORTED_TYPES.join(', ')}`,
      );
  }
}

async function parseJson(body: string, maxDepth: number): Promise<unknown> {
  try {
    return await parseJsonInSteps(Buffer.from(body, 'utf8'), maxDepth, {
      tooDeep: () => badRequest(`JSON input nested deeper than the limit of ${maxDepth} (JSON_MAX_DEPTH)`),
    });
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (err instanceof JsonStepsSyntaxError)
      throw badRequest(`Malformed JSON in request body: ${err.message}`);
    throw err;
  }
}
