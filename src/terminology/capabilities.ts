// What the server tells terminology clients about itself: its CapabilityStatement entries (it instantiates the
// terminology-server statement; the HL7 test suite's feature extensions) and GET [base]/metadata?mode=terminology,
// the TerminologyCapabilities: the shared code systems and their versions, and the $expand parameters. Only shared
// content is listed: the answer is public, and a project's own code systems are its own business.
import type { Database } from '../db/database.js';
import { SOFTWARE } from '../fhir/software.js';
import { EXPAND_OPERATION } from './engine/index.js';

const FEATURE = 'http://hl7.org/fhir/uv/application-feature/StructureDefinition/feature';

/** The version of the HL7 terminology ecosystem test suite this server is checked against (`npm run conformance`). */
export const TX_TESTS_VERSION = '1.9.0';

/** What the terminology feature adds to the CapabilityStatement. */
export const TERMINOLOGY_CAPABILITIES: { instantiates: string[]; extension: object[] } = {
  instantiates: ['http://hl7.org/fhir/CapabilityStatement/terminology-server'],
  extension: [
    {
      url: FEATURE,
      extension: [
        {
          url: 'definition',
          valueCanonical: 'http://hl7.org/fhir/uv/tx-tests/FeatureDefinition/test-version',
        },
        { url: 'value', valueCode: TX_TESTS_VERSION },
      ],
    },
    {
      url: FEATURE,
      extension: [
        {
          url: 'definition',
          valueCanonical: 'http://hl7.org/fhir/uv/tx-ecosystem/FeatureDefinition/CodeSystemAsParameter',
        },
        // Code systems (and value sets) are accepted as `tx-resource` parameters of every operation.
        { url: 'value', valueBoolean: true },
      ],
    },
  ],
};

/** The $expand parameters that say which value set to expand rather than how (not expansion parameters). */
const VALUE_SET_NAMING: ReadonlySet<string> = new Set(['url', 'valueSet', 'valueSetVersion', 'context']);

/** How long a built TerminologyCapabilities is served before the code system list is read again (changes
 * announced on this instance clear it sooner). */
const TTL_MS = 60_000;

/** Builds and caches the TerminologyCapabilities resource. */
export class TerminologyCapabilitiesSource {
  private cached?: { at: number; value: Promise<object> };

  constructor(private readonly db: Database) {}

  /** The TerminologyCapabilities resource (cached; one database read at most per TTL or change). */
  get(baseUrl: string): Promise<object> {
    const now = Date.now();
    if (!this.cached || now - this.cached.at > TTL_MS) {
      const value = this.build(baseUrl);
      this.cached = { at: now, value };
      // A failed read is not kept: the next request tries again.
      value.catch(() => {
        if (this.cached?.value === value) this.cached = undefined;
      });
    }
    return this.cached.value;
  }

  /** Forgets the cached resource (a code system changed). */
  clear(): void {
    this.cached = undefined;
  }

  private async build(baseUrl: string): Promise<object> {
    const rows = await this.db.sql<{ url: string; version: string | null }>(
      `SELECT DISTINCT url, version FROM "CodeSystem" WHERE "projectId" IS NULL AND url IS NOT NULL
       ORDER BY url, version`,
    );
    const systems = new Map<string, string[]>();
    for (const r of rows) {
      const versions = systems.get(r.url) ?? [];
      if (r.version) versions.push(r.version);
      systems.set(r.url, versions);
    }
    return {
      resourceType: 'TerminologyCapabilities',
      url: `${baseUrl}/metadata?mode=terminology`,
      version: SOFTWARE.version,
      name: 'FhirServerTerminologyCapabilities',
      title: 'FHIR server: terminology capabilities',
      status: 'active',
      date: new Date().toISOString().slice(0, 10),
      kind: 'instance',
      software: { name: SOFTWARE.name, version: SOFTWARE.version },
      implementation: { description: 'FHIR R4 terminology server', url: baseUrl },
      codeSystem: [...systems].map(([uri, versions]) => ({
        uri,
        ...(versions.length ? { version: versions.map((code) => ({ code })) } : {}),
      })),
      expansion: {
        hierarchical: true,
        paging: true,
        // Every $expand parameter but those naming the value set.
        parameter: EXPAND_OPERATION.parameters
          .filter((p) => !VALUE_SET_NAMING.has(p.name))
          .map((p) => ({ name: p.name, documentation: p.description })),
        textFilter:
          'Every filter word must be the start of a word of the display or a designation; the whole filter ' +
          'also matches a code exactly, and, when it is one token with a digit, the start of codes.',
      },
      codeSearch: 'all',
      validateCode: { translations: false },
    };
  }
}
