// The official runner's JSON comparison (CompareUtilities.compareObjects/compareNodes in hapifhir/org.hl7.fhir.core),
// ported: the expected file is a template with `$optional$`, `$optional-properties$`, `$count-arrays$` and string
// placeholders (`$instant$`, `$uuid$`, `$id$`, `$semver$`, `$url$`, `$token$`, `$string$`, `$choice:a|b$`, ...).
// Returns null when the actual JSON matches, else the runner's message for the first difference.

/** A parsed JSON value. */
// Object values may be typed undefined so that literal test fixtures type-check; JSON.parse never yields one.
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json | undefined };
type JsonObject = { [k: string]: Json | undefined };

/** Options of one comparison (the runner's modes, external strings and variables). */
export interface CompareOptions {
  /** Test modes in force (an `$optional$: "mode"` entry is optional only in that mode, `"!mode"` outside it). */
  modes?: ReadonlySet<string>;
  /** `$external:name$` strings; without them `$external:n:a|b$` checks that a and b occur. */
  externals?: Record<string, string>;
  /** `$version$` must equal variables.version when given. */
  variables?: Record<string, string>;
  /** Pattern mode (the runner's metadata and term-caps tests): the actual document may have properties the
   * template lacks, and each expected array item must be found, in order, among the actual items. */
  pattern?: boolean;
}

const isObject = (v: Json | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Compares an expected template with an actual document, as the runner does. */
export function compareJson(expected: Json, actual: Json, opts: CompareOptions = {}): string | null {
  return new Comparer(opts).nodes('', expected, actual, false);
}

const INSTANT_RE =
  /^([0-9]([0-9]([0-9][1-9]|[1-9]0)|[1-9]00)|[1-9]000)-(0[1-9]|1[0-2])-(0[1-9]|[1-2][0-9]|3[0-1])T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]{1,9})?(Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00))$/;
const DATE_RE =
  /^([0-9]([0-9]([0-9][1-9]|[1-9]0)|[1-9]00)|[1-9]000)-(0[1-9]|1[0-2])-(0[1-9]|[1-2][0-9]|3[0-1])(T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]{1,9})?(Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00)))?$/;
const UUID_RE = /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ID_RE = /^[A-Za-z0-9\-.]{1,64}$/;
const URL_RE = /^(https?:\/\/|www\.)[-a-zA-Z0-9+&@#/%?=~_|!:.;]*[-a-zA-Z0-9+&@#/%=~_|]$/;
const TOKEN_RE = /^[0-9a-zA-Z_][0-9a-zA-Z_.-]*$/;
const SEMVER_RE =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** Does an actual string match an expected string or placeholder? (CompareUtilities.matches) */
export function matchesString(actual: string, expected: string, opts: CompareOptions = {}): boolean {
  if (!(expected.length >= 2 && expected.startsWith('$') && expected.endsWith('$'))) {
    // `$version$` inside a string (the IG writes `http://hl7.org/fhir/administrative-gender|$version$` so that one
    // expected file serves R4 and R5 servers) stands for the runner's version variable, as a whole `$version$`
    // does; without the variable it matches any version.
    if (expected.includes('$version$')) return matchesVersioned(actual, expected, opts.variables?.version);
    return actual === expected;
  }
  if (expected.startsWith('$choice:')) return expected.slice(8, -1).split('|').includes(actual);
  if (expected.startsWith('$fragments:')) {
    const low = actual.toLowerCase();
    return expected
      .slice(11, -1)
      .split('|')
      .every((f) => low.includes(f.toLowerCase()));
  }
  if (expected.startsWith('$external:')) {
    const cmd = expected.slice(1, -1).split(':');
    if (opts.externals) return actual === opts.externals[cmd[1]];
    if (cmd.length <= 2) return true;
    const low = actual.toLowerCase();
    return cmd[2].split('|').every((f) => low.includes(f.toLowerCase()));
  }
  switch (expected) {
    case '$$':
      return true;
    case '$instant$':
      return INSTANT_RE.test(actual);
    case '$date$':
      return DATE_RE.test(actual);
    case '$uuid$':
      return UUID_RE.test(actual);
    case '$string$':
      return actual === actual.trim();
    case '$id$':
      return ID_RE.test(actual);
    case '$url$':
      return URL_RE.test(actual);
    case '$token$':
      return TOKEN_RE.test(actual);
    case '$semver$':
      return SEMVER_RE.test(actual);
    case '$version$':
      return opts.variables?.version === undefined || actual === opts.variables.version;
    default:
      // The runner throws on an unknown template; a suite using one is a suite error, reported as a failure.
      throw new Error(`Unhandled template: ${expected}`);
  }
}

function matchesVersioned(actual: string, expected: string, version: string | undefined): boolean {
  if (version !== undefined) return actual === expected.split('$version$').join(version);
  const parts = expected.split('$version$').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^|]+')}$`).test(actual);
}

function kind(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function presentExpected(expected: string): string {
  if (expected.startsWith('$') && expected.endsWith('$') && expected.length >= 2) {
    if (expected.startsWith('$choice:'))
      return `Contains one of ${expected.slice(8, -1).split('|').join(', ')}`;
    if (expected.startsWith('$fragments:'))
      return `Contains all of ${expected.slice(11, -1).split('|').join(', ')}`;
    return `"A ${expected.slice(1, -1)}"`;
  }
  return `"${expected}"`;
}

function notEqual(message: string, expected: string, actual: string): string {
  return `${message}\nExpected :${presentExpected(expected)}\nActual  :"${actual}"`;
}

class Comparer {
  constructor(private readonly opts: CompareOptions) {}

  private passesOptionalFilter(token: string): boolean {
    if (token.startsWith('!')) return !this.opts.modes?.has(token.slice(1));
    if (token.startsWith('warning:')) return true;
    // `version:4`: optional when the server's FHIR version (the version variable) starts with 4.
    if (token.startsWith('version:')) {
      const v = this.opts.variables?.version;
      return v !== undefined && v.startsWith(token.slice(8));
    }
    return this.opts.modes?.has(token) ?? false;
  }

  private isOptional(e: Json): boolean {
    if (!isObject(e)) return false;
    const o = e.$optional$;
    if (typeof o === 'string') return this.passesOptionalFilter(o);
    return o === true;
  }

  /** CompareUtilities.allOptional: an expected array whose object items are all `$optional$` may be absent. */
  private allOptional(v: Json): boolean {
    if (!Array.isArray(v)) return false;
    return v.every((e) => !isObject(e) || e.$optional$ !== undefined);
  }

  objects(path: string, expected: JsonObject, actual: JsonObject): string | null {
    const optionals: string[] = [];
    if (expected['$optional-properties$'] !== undefined) {
      optionals.push('$optional-properties$', '$count-arrays$');
      const list = expected['$optional-properties$'];
      for (const s of Array.isArray(list) ? list : [list]) optionals.push(String(s));
    }
    const countOnly: string[] = [];
    const ca = expected['$count-arrays$'];
    if (ca !== undefined) for (const s of Array.isArray(ca) ? ca : [ca]) countOnly.push(String(s));
    for (const n of Object.keys(actual)) {
      if (n === 'fhir_comments') continue;
      if (!(n in expected)) {
        if (this.opts.pattern || optionals.includes(n)) continue;
        return `properties differ at ${path}: unexpected property ${n}`;
      }
      const s = this.nodes(`${path}.${n}`, expected[n] ?? null, actual[n] ?? null, countOnly.includes(n));
      if (s) return s;
    }
    for (const n of Object.keys(expected)) {
      if (n === 'fhir_comments' || n === '$optional$' || optionals.includes('*') || optionals.includes(n))
        continue;
      if (!(n in actual) && !this.allOptional(expected[n] ?? null))
        return `properties differ at ${path}: missing property ${n}`;
    }
    return null;
  }

  nodes(path: string, expected: Json, actual: Json, countOnly: boolean): string | null {
    const ek = kind(expected);
    const ak = kind(actual);
    const primitive = (k: string) => k !== 'object' && k !== 'array';
    if (!(primitive(ek) && primitive(ak)) && ek !== ak)
      return notEqual(`properties differ at ${path}`, ek, ak);
    if (primitive(ak)) {
      if (ak === 'boolean' && ek === 'boolean') {
        if (actual !== expected)
          return notEqual(`boolean property values differ at ${path}`, String(expected), String(actual));
      } else if (ak === 'string' && ek === 'string') {
        const a = actual as string;
        const e = expected as string;
        // The runner skips XHTML narrative, and accepts equal base64 content written differently.
        if (
          !(a.includes('<div') && e.includes('<div')) &&
          !matchesString(a, e, this.opts) &&
          !sameBase64(a, e)
        )
          return notEqual(`string property values differ at ${path}`, e, a);
      } else if (ak === 'number' && ek === 'number') {
        if (String(actual) !== String(expected))
          return notEqual(`number property values differ at ${path}`, String(expected), String(actual));
      } else if (ek === 'null') {
        if (ak !== 'null') return notEqual(`null Properties differ at ${path}`, 'null', String(actual));
      } else {
        return notEqual(`property types differ at ${path}`, String(expected), String(actual));
      }
      return null;
    }
    if (ak === 'object') return this.objects(path, expected as JsonObject, actual as JsonObject);
    const act = actual as Json[];
    const exp = expected as Json[];
    const as = act.length;
    const es = exp.length;
    if (countOnly) {
      return as !== es ? notEqual(`array item count differs at ${path}`, String(es), String(as)) : null;
    }
    if (this.opts.pattern) {
      let c = 0;
      for (let i = 0; i < es; i++) {
        let s: string | null = "Doesn't exist";
        while (s !== null && c < as) s = this.nodes(`${path}[${i}]`, exp[i], act[c++], false);
        if (s !== null) return `The expected item at ${path} at index ${i} was not found: ${s}`;
      }
      return null;
    }
    const oc = exp.filter((e) => this.isOptional(e)).length;
    const expectedMin = es - oc;
    if (as > es || as < expectedMin)
      return notEqual(`array item count differs at ${path}`, String(es), String(as));
    let c = 0;
    for (let i = 0; i < es; i++) {
      if (c >= as) {
        if (i >= es - oc && this.isOptional(exp[i])) return null;
        return `One or more array items did not match at ${path} starting at index ${i}`;
      }
      const s = this.nodes(`${path}[${i}]`, exp[i], act[c], false);
      if (s && !this.isOptional(exp[i])) return s;
      if (!s) c++;
    }
    if (c < as) return `Unexpected Node found in array at '${path}' at index ${c}`;
    return null;
  }
}

/** The runner's last fallback for two strings (CompareUtilities.sameBytes(unBase64(a), unBase64(b))): both decode
 * to the same non-empty bytes as lenient Base64, as commons-codec's Base64.decodeBase64 decodes. */
function sameBase64(a: string, b: string): boolean {
  const x = lenientBase64(a);
  const y = lenientBase64(b);
  return x.length > 0 && y.length > 0 && x.equals(y);
}

/** Base64 and URL-safe Base64 digits (commons-codec's decode table: both alphabets). */
const DIGITS = new Map<string, number>(
  [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].map((c, i) => [c, i]),
);
DIGITS.set('-', 62);
DIGITS.set('_', 63);

/** Decodes as commons-codec does, leniently: characters outside the alphabets are skipped, the first `=` ends the
 * input, and a last group of 2 or 3 digits gives 1 or 2 bytes (a lone digit none). */
export function lenientBase64(text: string): Buffer {
  const out: number[] = [];
  let bits = 0;
  let n = 0;
  for (const c of text) {
    if (c === '=') break;
    const d = DIGITS.get(c);
    if (d === undefined) continue;
    bits = (bits << 6) | d;
    if (++n === 4) {
      out.push((bits >> 16) & 0xff, (bits >> 8) & 0xff, bits & 0xff);
      bits = 0;
      n = 0;
    }
  }
  if (n === 2) out.push((bits >> 4) & 0xff);
  else if (n === 3) out.push((bits >> 10) & 0xff, (bits >> 2) & 0xff);
  return Buffer.from(out);
}
