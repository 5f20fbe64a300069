// The services one server instance is made of, handed to GraphQL resolvers and REST handlers through the context.
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import type { AuthService } from './auth/auth-service.js';
import type { ResourceRegistry } from './fhir/registry.js';
import type { BotService } from './bots/service.js';
import type { TerminologyService } from './terminology/service.js';
import type { OperationRunner } from './graphql/context.js';

export interface Services {
  config: Config;
  db: Database;
  logger: Logger;
  auth: AuthService;
  fhir: ResourceRegistry;
  /** Bots: storage, execution, jobs, secrets. */
  bots: BotService;
  /** Terminology: CodeSystem/ValueSet resolution, indexes and $expand. */
  terminology: TerminologyService;
  /** Internal GraphQL operations (bots' `medplum` argument runs its calls through it). */
  operations: OperationRunner;
  /** An id for this process, for job claims and logs. */
  instanceId: string;
}
