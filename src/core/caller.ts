// Who is calling: the signed-in session (Login) an access token names, with the facts of the request it came with.
// Domain code takes a Caller to decide what may be done and in which project; it knows nothing of HTTP or GraphQL
// (the HTTP layer builds one per request, the bot job runner from the stored session of the job's caller).
import { ApiError } from './errors.js';

/** A signed-in session as the server checks it on each request: user or client, project, membership, rights. */
export interface Principal {
  loginId: string;
  userId: string | null;
  clientId: string | null;
  projectId: string;
  membershipId: string;
  admin: boolean;
  scope: string;
  authMethod: string;
}

/** Facts about the request an operation runs for. */
export interface RequestFacts {
  requestId: string;
  remoteAddress?: string;
  userAgent?: string;
  /** Request headers, lower-case names (Authorization and Cookie included: strip before handing on). */
  headers: Record<string, string | string[] | undefined>;
  /** The raw bearer token, when one authenticated the request (for logout/introspection). */
  token?: string;
}

/** A signed-in caller: the session's principal and the request it sent. */
export interface Caller extends Principal {
  readonly request: RequestFacts;
}

/** The caller of a request signed in as `p`. A class: one shape for every caller (V8 keeps it monomorphic). */
class SignedInCaller implements Caller {
  readonly loginId: string;
  readonly userId: string | null;
  readonly clientId: string | null;
  readonly projectId: string;
  readonly membershipId: string;
  readonly admin: boolean;
  readonly scope: string;
  readonly authMethod: string;
  constructor(
    p: Principal,
    readonly request: RequestFacts,
  ) {
    this.loginId = p.loginId;
    this.userId = p.userId;
    this.clientId = p.clientId;
    this.projectId = p.projectId;
    this.membershipId = p.membershipId;
    this.admin = p.admin;
    this.scope = p.scope;
    this.authMethod = p.authMethod;
  }
}

/** The caller for a principal and its request. */
export function callerOf(principal: Principal, request: RequestFacts): Caller {
  return new SignedInCaller(principal, request);
}

/** The principal alone (what may be stored, e.g. with a queued job): no request facts. */
export function principalOf(p: Principal): Principal {
  return {
    loginId: p.loginId,
    userId: p.userId,
    clientId: p.clientId,
    projectId: p.projectId,
    membershipId: p.membershipId,
    admin: p.admin,
    scope: p.scope,
    authMethod: p.authMethod,
  };
}

/** The caller, or a 401 when the request is not signed in. */
export function requireSignedIn(caller: Caller | null | undefined): Caller {
  if (!caller) throw signInRequired();
  return caller;
}

/** The 401 for a request that needs a signed-in caller. */
export function signInRequired(): ApiError {
  return new ApiError(401, 'login', 'Authentication required: send Authorization: Bearer <access token>');
}
