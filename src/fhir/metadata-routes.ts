// GET [base]/metadata: the CapabilityStatement, built from what the features registered; [base]/$versions: the
// FHIR versions served (R5's CapabilityStatement-versions, which the HL7 test runner asks first).
import type { IRouter } from 'express';
import type { DeclaredOperation, HttpApi } from '../rest/api.js';
import { sendFhir } from '../rest/outcome.js';
import { fhirBaseUrl } from '../config.js';
import { SOFTWARE } from './software.js';

/** The system-level $versions operation, for the CapabilityStatement. */
export const VERSIONS_OPERATION: DeclaredOperation = {
  name: 'versions',
  definition: 'http://hl7.org/fhir/OperationDefinition/CapabilityStatement-versions',
  documentation: 'The FHIR versions this server serves (4.0) and its default (4.0).',
};

/** Registers GET [base]/metadata and [base]/$versions (no authentication: clients read them before they sign in). */
export function metadataRoutes(r: IRouter, base: string): void {
  r.get(`${base}/metadata`, (req, res) => sendFhir(res, 200, capabilityStatement(req.api)));
  const versions = {
    resourceType: 'Parameters',
    parameter: [
      { name: 'version', valueCode: '4.0' },
      { name: 'default', valueCode: '4.0' },
    ],
  };
  r.get(`${base}/\\$versions`, (_req, res) => sendFhir(res, 200, versions));
  r.post(`${base}/\\$versions`, (_req, res) => sendFhir(res, 200, versions));
}

/** The server's CapabilityStatement. */
function capabilityStatement(api: HttpApi) {
  const ops = (type?: string) =>
    api.operations
      .filter((d) => d.resourceType === type)
      .map((d) => ({
        name: d.name,
        definition: d.definition ?? `http://hl7.org/fhir/OperationDefinition/${d.name}`,
        ...(d.documentation ? { documentation: d.documentation } : {}),
      }));
  const base = fhirBaseUrl(api.config);
  return {
    resourceType: 'CapabilityStatement',
    ...(api.capabilities.extension.length ? { extension: api.capabilities.extension } : {}),
    url: `${base}/metadata`,
    version: SOFTWARE.version,
    name: 'FhirServerCapabilities',
    title: 'FHIR server: sessions, terminology and bots',
    status: 'active',
    date: new Date().toISOString().slice(0, 10),
    kind: 'instance',
    ...(api.capabilities.instantiates.length ? { instantiates: api.capabilities.instantiates } : {}),
    software: { name: SOFTWARE.name, version: SOFTWARE.version, releaseDate: SOFTWARE.releaseDate },
    implementation: {
      description: 'FHIR R4 server: sessions, terminology and bots',
      url: base,
    },
    fhirVersion: '4.0.1',
    format: ['application/fhir+json', 'json'],
    rest: [
      {
        mode: 'server',
        security: {
          cors: false,
          service: [
            {
              coding: [
                { system: 'http://terminology.hl7.org/CodeSystem/restful-security-service', code: 'OAuth' },
              ],
            },
          ],
          description: 'OAuth2 Bearer tokens from /oauth2/token',
        },
        resource: api.resourceTypes().map((type) => ({
          type,
          interaction: ['create', 'read', 'update', 'delete', 'search-type'].map((code) => ({ code })),
          searchParam: [
            { name: 'url', type: 'uri' },
            { name: 'version', type: 'token' },
            { name: 'identifier', type: 'token' },
            { name: 'name', type: 'string' },
          ],
          ...(ops(type).length ? { operation: ops(type) } : {}),
        })),
        ...(ops(undefined).length ? { operation: ops(undefined) } : {}),
      },
    ],
  };
}
