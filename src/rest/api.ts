// What the HTTP layer needs of the application, given to it by the app (src/server.ts): the settings, the log,
// authentication of bearer tokens, a GraphQL context per request, and the facts /healthz, /metadata and
// /.well-known/jwks.json show. Routes reach it as `req.api`; nothing in src/rest imports a feature.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Principal, RequestFacts } from '../core/caller.js';
import type { GraphQLContext } from '../graphql/context.js';
import type { LargeRequests } from '../fhir/large-requests.js';

/** An operation a feature declares for the CapabilityStatement. */
export interface DeclaredOperation {
  resourceType?: string;
  name: string;
  definition?: string;
  documentation?: string;
}

/** What a feature adds to the CapabilityStatement besides its operations: canonical statements it instantiates
 * and feature extensions (http://hl7.org/fhir/uv/application-feature). */
export interface CapabilityContribution {
  instantiates?: readonly string[];
  extension?: readonly object[];
}

/** Whether this instance should be sent traffic (/healthz/ready), and why not. */
export interface Readiness {
  ready: boolean;
  /** Why not: the server is shutting down, or the database does not answer. */
  reason?: 'draining' | 'database unreachable';
}

export interface HttpApi {
  readonly config: Readonly<Config>;
  readonly logger: Logger;
  /** The principal of an access token whose claims and session are cached and active; undefined: ask
   * `authenticate` (synchronous, so the common request costs no promise). */
  authenticateCached(token: string): Principal | undefined;
  /** The principal of an access token; rejects with a 401 ApiError when the token or its session is not valid. */
  authenticate(token: string): Promise<Principal>;
  /** The GraphQL context of one operation for a request, signed in as `principal` (or anonymous). */
  context(principal: Principal | null, request: RequestFacts): GraphQLContext;
  /** What /healthz reports besides its status and the event loop: the database kind first, then other facts (the
   * embedded database's fsync counters, ...). */
  health(): { database: string; [fact: string]: unknown };
  /** Readiness (a cached `SELECT 1` and the draining flag): synchronous while the last probe is fresh. */
  readiness(): Readiness | Promise<Readiness>;
  /** Readiness from the last probe whatever its age, never waiting (a due probe starts in the background). */
  readinessNow(): Readiness;
  /** The resource types served (CapabilityStatement). */
  resourceTypes(): string[];
  /** The FHIR operations the features declare (CapabilityStatement). */
  readonly operations: readonly DeclaredOperation[];
  /** What the features add to the CapabilityStatement, merged. */
  readonly capabilities: { instantiates: readonly string[]; extension: readonly object[] };
  /** The public key tokens are signed with, as a JWK. */
  readonly publicJwk: object;
  /** The budget of large requests (a JSON body over 1 MiB takes a slot before it is read). */
  readonly large: LargeRequests;
}
