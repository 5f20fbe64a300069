// How one test's answer is judged, as the official runner (TxTester) does: the R4 response parsed as R4 and
// converted to R5, scrubbed and sorted, compared with the expected JSON (pattern mode for metadata reads), and the
// HTTP status class checked. Shared by the live run and the calibration on recorded answers.
import { compareJson, type Json } from './compare.js';
import { READS, type ConformanceTest } from './loader.js';
import { normalizeCapabilities, normalizeResponse } from './normalize.js';
import { fromR4 } from './r4.js';

/** The verdict on one answer: passed, or the comparison's message. */
export function judge(
  t: ConformanceTest,
  status: number,
  text: string,
): { passed: boolean; message?: string; actual?: Json } {
  let actual: Json;
  try {
    actual = JSON.parse(text) as Json;
  } catch {
    return { passed: false, message: `Response is not JSON: ${text.slice(0, 200)}` };
  }
  fromR4(actual);
  const pattern = READS.has(t.operation);
  actual = pattern ? normalizeCapabilities(actual) : normalizeResponse(actual, t.operation);
  let message: string | null;
  try {
    message = compareJson(t.expected, actual, { modes: t.modes, variables: { version: '4.0.1' }, pattern });
  } catch (err) {
    message = String(err);
  }
  const klass = `${Math.floor(status / 100)}xx`;
  if (klass !== t.httpCode)
    message = `Response Code fail: should be '${t.httpCode}' but is '${status}'${message ? `\n${message}` : ''}`;
  return { passed: message === null, message: message ?? undefined, actual };
}
