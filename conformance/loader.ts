// Finds the HL7 terminology ecosystem test suite and lists the general-mode `expand`, `lookup`, `validate-code` and
// `cs-validate-code` tests (OPERATIONS),
// with what the official runner sends for each: the test's request, the suite's setup resources as `tx-resource`, then the profile's
// parameters (parameters-default.json: a `uuid` cache-buster), and its Accept-Language; all converted to R4 as the
// runner's R4 client converts them (r4.ts).
import fs from 'node:fs';
import path from 'node:path';
import type { Json } from './compare.js';
import { toR4 } from './r4.js';

/** The repository root (this file is in conformance/). */
export const ROOT = path.resolve(import.meta.dirname, '..');

/** The suite's folder: TX_ECOSYSTEM_DIR, else ../shared/tx-ecosystem beside the repository. */
export function suiteDir(): string {
  const dir = process.env.TX_ECOSYSTEM_DIR ?? path.join(ROOT, '..', 'shared', 'tx-ecosystem');
  return path.resolve(ROOT, dir);
}

/** The operations replayed, and where the runner's R4 client sends each (TxTester: expandValueset, lookupCode,
 * validateVS, validateCS, batchValidateVS; metadata and term-caps are read). */
export const OPERATIONS: Readonly<Record<string, string>> = {
  expand: 'ValueSet/$expand',
  lookup: 'CodeSystem/$lookup',
  'validate-code': 'ValueSet/$validate-code',
  'cs-validate-code': 'CodeSystem/$validate-code',
  'batch-validate': 'ValueSet/$batch-validate-code',
  translate: 'ConceptMap/$translate',
  metadata: 'metadata',
  'term-caps': 'metadata?mode=terminology',
};

/** The operations the runner reads with GET, sorted and judged in pattern mode (TxTester.metadata, termcaps): the
 * server's CapabilityStatement and TerminologyCapabilities, fetched once when it connects. */
export const READS: ReadonlySet<string> = new Set(['metadata', 'term-caps']);

/** One test as the runner would execute it. */
export interface ConformanceTest {
  suite: string;
  name: string;
  /** The test's operation (a key of OPERATIONS). */
  operation: string;
  /** The Parameters resource to POST: the request, the suite's setup as tx-resource, the profile's parameters. */
  body: Json;
  /** The same without the setup (the `--stored` mode stores the setup through the REST API instead). */
  bodyWithoutSetup: Json;
  /** The suite's setup resources (in R4, in the suite's order). */
  setup: Json[];
  acceptLanguage?: string;
  /** Request headers the test names (`header`, without a mode: the official runner sends those). */
  headers: Record<string, string>;
  /** The expected response file (relative to tests/) and its parsed content. */
  responseFile: string;
  expected: Json;
  /** The expected HTTP status class ('2xx', '4xx', ...). */
  httpCode: string;
  /** The modes the runner runs this test with: `general`, or `general` + `tx.fhir.org` for the tests of a general
   * suite that carry `mode: tx.fhir.org` (see TX_FHIR_ORG_TESTS). */
  modes: ReadonlySet<string>;
}

interface SuiteJson {
  name: string;
  mode?: string;
  disabled?: boolean;
  setup?: string[];
  tests: Array<Record<string, unknown>>;
}

/** The modes the runner runs with here: only `general` (no external terminology content is loaded). */
export const MODES: ReadonlySet<string> = new Set(['general']);

/** Tests of general suites marked `mode: tx.fhir.org` that need nothing but the suite's own setup (paged `is-a`
 * expansions). The runner runs them when asked for that mode; `npm run conformance` counts them separately. */
export const TX_FHIR_ORG_TESTS: ReadonlySet<string> = new Set([
  'simple-expand-isa-o2',
  'simple-expand-isa-c2',
  'simple-expand-isa-o2c2',
]);
const WITH_TX_FHIR_ORG: ReadonlySet<string> = new Set(['general', 'tx.fhir.org']);

function readJson(testsDir: string, file: string): Json {
  // Some of the suite's files start with a byte order mark, which the runner's parser skips.
  return JSON.parse(fs.readFileSync(path.join(testsDir, file), 'utf8').replace(/^\uFEFF/, '')) as Json;
}

/** The runner's chooseParam: a `name:mode` entry for one of the modes wins over `name`. */
function chooseParam(
  test: Record<string, unknown>,
  name: string,
  modes: ReadonlySet<string>,
): string | undefined {
  for (const m of modes) if (typeof test[`${name}:${m}`] === 'string') return test[`${name}:${m}`] as string;
  return typeof test[name] === 'string' ? (test[name] as string) : undefined;
}

/** Every general-mode expand test, then the TX_FHIR_ORG_TESTS (suites and tests with another mode, and disabled
 * ones, are left out). */
export function loadExpandTests(dir = suiteDir()): ConformanceTest[] {
  return loadTests(dir).filter((t) => t.operation === 'expand');
}

/** Every general-mode test of the OPERATIONS (and the TX_FHIR_ORG_TESTS), in the suite's order; the runner sends
 * each the same way: the request, the setup as tx-resource, the profile's parameters. */
export function loadTests(dir = suiteDir()): ConformanceTest[] {
  const testsDir = path.join(dir, 'tests');
  if (!fs.existsSync(path.join(testsDir, 'test-cases.json')))
    throw new Error(`No test-cases.json in ${testsDir}: set TX_ECOSYSTEM_DIR to the suite's folder`);
  const cases = readJson(testsDir, 'test-cases.json') as unknown as { suites: SuiteJson[] };
  const out: ConformanceTest[] = [];
  for (const suite of cases.suites) {
    if ((suite.mode && !MODES.has(suite.mode)) || suite.disabled) continue;
    let setup: Json[] | undefined;
    for (const test of suite.tests) {
      if (typeof test.operation !== 'string' || !(test.operation in OPERATIONS) || test.disabled === true)
        continue;
      let modes = MODES;
      if (typeof test.mode === 'string' && !MODES.has(test.mode)) {
        if (!TX_FHIR_ORG_TESTS.has(String(test.name))) continue;
        modes = WITH_TX_FHIR_ORG;
      }
      setup ??= (suite.setup ?? []).map((f) => toR4(readJson(testsDir, f)));
      const reqFile = chooseParam(test, 'request', modes);
      const request = toR4(reqFile ? readJson(testsDir, reqFile) : { resourceType: 'Parameters' }) as {
        parameter?: Json[];
      };
      const profile = readJson(
        testsDir,
        typeof test.profile === 'string' ? test.profile : 'parameters-default.json',
      ) as {
        parameter?: Json[];
      };
      const responseFile = chooseParam(test, 'response', modes);
      if (!responseFile) continue;
      const parameter: Json[] = [
        ...(request.parameter ?? []),
        ...setup.map((r) => ({ name: 'tx-resource', resource: r })),
        ...(profile.parameter ?? []),
      ];
      out.push({
        suite: suite.name,
        name: String(test.name),
        operation: test.operation,
        body: { resourceType: 'Parameters', parameter },
        bodyWithoutSetup: {
          resourceType: 'Parameters',
          parameter: [...(request.parameter ?? []), ...(profile.parameter ?? [])],
        },
        setup,
        acceptLanguage: typeof test['Accept-Language'] === 'string' ? test['Accept-Language'] : undefined,
        headers: testHeaders(test.header),
        responseFile,
        expected: readJson(testsDir, responseFile),
        httpCode: typeof test['http-code'] === 'string' ? test['http-code'] : '2xx',
        modes,
      });
    }
  }
  return out;
}

/** A test's `header` entries (one object or a list of them) that name no mode, as request headers. */
function testHeaders(header: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of Array.isArray(header) ? header : header ? [header] : []) {
    const { name, value, mode } = h as { name?: unknown; value?: unknown; mode?: unknown };
    if (typeof name === 'string' && typeof value === 'string' && mode === undefined) out[name] = value;
  }
  return out;
}
