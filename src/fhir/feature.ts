// The generic FHIR REST interactions (metadata, create, read, update, delete, search) over every feature's stores.
// Last in the route order: its `[base]/:type` routes would also match the features' operations.
import { fhirRoutes } from './routes.js';
import { VERSIONS_OPERATION } from './metadata-routes.js';
import type { Feature } from '../rest/feature.js';

/** The generic FHIR feature. */
export function fhirFeature(): Feature {
  return { routes: fhirRoutes, operations: [VERSIONS_OPERATION] };
}
