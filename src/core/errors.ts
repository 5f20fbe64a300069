// Client-facing errors, free of any transport: each carries an HTTP status and a FHIR issue code. REST answers
// them with operationOutcome() (or an OAuth2 error body); GraphQL maps them to GraphQLError at the edge
// (src/graphql/errors.ts, yoga's maskError). Anything else is an internal error (masked, 500). Imports nothing.

/** FHIR IssueType codes we use. */
export type IssueCode =
  | 'invalid'
  | 'required'
  | 'value'
  | 'structure'
  | 'not-found'
  | 'forbidden'
  | 'login'
  | 'security'
  | 'conflict'
  | 'duplicate'
  | 'too-costly'
  | 'not-supported'
  | 'processing'
  | 'exception'
  | 'timeout'
  | 'throttled'
  | 'transient'
  | 'informational';

/** One OperationOutcome issue. */
export interface OutcomeIssue {
  severity: 'error' | 'information' | 'warning' | 'fatal';
  code: string;
  details: { text: string; coding?: { system: string; code: string }[] };
  expression?: string[];
}

/** An OperationOutcome resource. */
export interface OperationOutcome {
  resourceType: 'OperationOutcome';
  issue: OutcomeIssue[];
}

const TX_ISSUE_TYPE = 'http://hl7.org/fhir/tools/CodeSystem/tx-issue-type';

/**
 * The one OperationOutcome builder: one issue with its text in `details.text` (and `expression` when given; the
 * terminology ecosystem IG's issue type as `details.coding` when given).
 */
export function operationOutcome(
  severity: OutcomeIssue['severity'],
  code: string,
  text: string,
  expression?: string[],
  txIssueType?: string,
): OperationOutcome {
  const details = txIssueType ? { coding: [{ system: TX_ISSUE_TYPE, code: txIssueType }], text } : { text };
  return {
    resourceType: 'OperationOutcome',
    issue: [{ severity, code, details, ...(expression ? { expression } : {}) }],
  };
}

/** A client-facing error with its HTTP status (named ApiError since before it left GraphQL; AppError is the same). */
export class ApiError extends Error {
  override name = 'ApiError';
  /** FHIRPath-ish locations of the problem, when known. */
  readonly expression?: string[];
  /** The OAuth2 `error` code REST's /oauth2 routes answer with, when it differs from the issue code's mapping. */
  readonly oauthError?: string;
  /** The terminology ecosystem IG's tx-issue-type code (e.g. not-found, version-error), when it applies. */
  readonly txIssueType?: string;
  /** Response headers the error asks for (e.g. Retry-After on 429), on REST and GraphQL alike. */
  readonly headers?: Record<string, string>;

  constructor(
    public readonly status: number,
    public readonly issueCode: IssueCode,
    message: string,
    extra: {
      expression?: string[];
      oauthError?: string;
      txIssueType?: string;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.headers = extra.headers;
    this.expression = extra.expression;
    this.oauthError = extra.oauthError;
    this.txIssueType = extra.txIssueType;
  }

  /** The error as an OperationOutcome (its issue list). */
  toOperationOutcome(): OperationOutcome {
    return operationOutcome('error', this.issueCode, this.message, this.expression, this.txIssueType);
  }
}

/** The transport-free application error (the same class as ApiError). */
export { ApiError as AppError };

/** 400 invalid input. */
export const badRequest = (message: string, expression?: string[]) =>
  new ApiError(400, 'invalid', message, { expression });
/** 401 not signed in / token not accepted. */
export const unauthorized = (message = 'Unauthorized') => new ApiError(401, 'login', message);
/** 403 signed in but not allowed. */
export const forbidden = (message = 'Forbidden') => new ApiError(403, 'forbidden', message);
/** 404 not found (also used where revealing existence would leak). */
export const notFound = (message = 'Not found') => new ApiError(404, 'not-found', message);
/** 409 conflict (duplicates). */
export const conflict = (message: string) => new ApiError(409, 'duplicate', message);

/** Seconds a client is asked to wait (Retry-After) when the database is unreachable. */
export const DATABASE_RETRY_AFTER_S = 5;

/** 503 transient: the database cannot be reached now; the same request may succeed later (Retry-After). */
export const databaseUnavailable = () =>
  new ApiError(503, 'transient', 'The database is unreachable; retry later', {
    oauthError: 'temporarily_unavailable',
    headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_S) },
  });

// What says "the database cannot be reached" in each driver. Socket errors (pg, and the Prisma pg adapter's
// DatabaseNotReachable/ConnectionClosed/SocketTimeout); SQLSTATE class 08 (connection exception), 57P01-57P03
// (shutting down, crashed, starting up); Prisma's P1001 (can't reach), P1002 (timed out), P1008 (socket timeout),
// P1017 (server closed the connection), P2024 (timed out waiting for a pool connection). pg's own connection
// errors carry no code, only a message.
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
const SQLSTATES = new Set(['57P01', '57P02', '57P03']);
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout']);
const PG_MESSAGES =
  /^(Connection terminated|Connection terminated unexpectedly|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)\b/;

/** True when `err` (or an error it wraps: `cause`, Prisma's `meta.driverAdapterError`, an AggregateError's list)
 * says the database cannot be reached, from pg or Prisma (with or without its driver adapter). */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 5) return false;
  const e = err as {
    code?: unknown;
    kind?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
    meta?: { driverAdapterError?: unknown };
  };
  if (typeof e.code === 'string') {
    if (SOCKET_CODES.has(e.code) || SQLSTATES.has(e.code) || PRISMA_CODES.has(e.code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(e.code)) return true;
  }
  if (typeof e.kind === 'string') {
    if (ADAPTER_KINDS.has(e.kind)) return true;
  }
  if (typeof e.message === 'string' && PG_MESSAGES.test(e.message)) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isDatabaseUnavailable(x, depth + 1))) return true;
  return (
    isDatabaseUnavailable(e.meta?.driverAdapterError, depth + 1) || isDatabaseUnavailable(e.cause, depth + 1)
  );
}
