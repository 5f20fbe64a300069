// GET [base]/metadata: the CapabilityStatement, built from what the features registered.
import type { IRouter } from 'express';
import type { HttpApi } from '../rest/api.js';
import { sendFhir } from '../rest/outcome.js';
import { fhirBaseUrl } from '../config.js';

/** Registers GET [base]/metadata (no authentication: clients read it before they sign in). */
export function metadataRoutes(r: IRouter, base: string): void {
  r.get(`${base}/metadata`, (req, res) => sendFhir(res, 200, capabilityStatement(req.api)));
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
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    date: new Date().toISOString().slice(0, 10),
    kind: 'instance',
    software: { name: 'fhir-sessions-terminology-bots', version: '0.1.0' },
    implementation: {
      description: 'FHIR R4 server: sessions, terminology and bots',
      url: fhirBaseUrl(api.config),
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
