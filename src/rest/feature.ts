// A feature as the app assembles it: every feature is registered the same way, by what it hands over.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { ResourceStore } from '../fhir/types.js';
import type { LargeRequests } from '../fhir/large-requests.js';
import type { Services } from '../graphql/context.js';
import type { FeatureRoutes } from './app.js';
import type { CapabilityContribution, DeclaredOperation } from './api.js';

/** What every feature is built from. */
export interface FeatureDeps {
  config: Readonly<Config>;
  db: Database;
  logger: Logger;
  /** A folder for files the server keeps beside its data (none for an in-memory test server). */
  dataDir?: string;
  /** The budget of large requests (big bodies, streamed reads) the stores and the HTTP layer share. */
  large: LargeRequests;
}

/** One feature of the server. Its GraphQL types are part of the one static schema (src/graphql/schema.ts). */
export interface Feature {
  /** The FHIR resource types it serves, with their stores. */
  readonly stores?: Readonly<Record<string, ResourceStore>>;
  /** The FHIR operations it declares in the CapabilityStatement. */
  readonly operations?: readonly DeclaredOperation[];
  /** What else it adds to the CapabilityStatement. */
  readonly capabilities?: CapabilityContribution;
  /** Its HTTP routes (server.ts registers the features' routes in the order requests look for them). */
  readonly routes?: FeatureRoutes;
  /** Called once everything is assembled, before the server listens (features start in dependency order). */
  start?(services: Services): Promise<void>;
  /** Called at shutdown once requests have finished (in reverse order). */
  close?(): Promise<void>;
}
