// Every setting, read from an environment given by the caller (main.ts passes process.env), with its default. See
// README "Configuration". The result is frozen: settings do not change while the server runs.
import path from 'node:path';

/** Environment variables as loadConfig reads them (process.env, or a plain object in tests). */
export type Env = Readonly<Record<string, string | undefined>>;

/** A setting with a value it cannot take; startup stops with this message (main.ts prints it without a stack). */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Path of the FHIR R4 base under BASE_URL (no slashes at either end). */
export const FHIR_PATH = 'fhir/R4';

/** The FHIR base URL `{BASE_URL}fhir/R4` (no trailing slash), as every absolute FHIR link is built. */
export function fhirBaseUrl(config: Pick<Config, 'baseUrl'>): string {
  return `${config.baseUrl}${FHIR_PATH}`;
}

/** BASE_URL normalised: always ends with '/' (a missing one would give `.../apifhir/R4`). */
export function normaliseBaseUrl(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}

/** The first-start defaults (README "Configuration"); NODE_ENV=production refuses the two secrets. */
export const DEFAULT_ADMIN_PASSWORD = 'medplum_admin';
export const DEFAULT_CLIENT_SECRET = 'change-me-client-secret';

/** The server's settings. */
export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  dataDir: string;
  /** PostgreSQL URL; when absent the embedded PGlite database in dataDir is used. */
  databaseUrl?: string;
  /** PostgreSQL schema (search_path) to use; tests give each suite its own. */
  databaseSchema?: string;
  /** When set (embedded database only), the database is also served on 127.0.0.1:<port> over the PostgreSQL
   * protocol, so Prisma Studio or psql can use it while the server runs. */
  pgliteSocketPort?: number;
  adminEmail: string;
  adminPassword: string;
  clientId: string;
  clientSecret: string;
  /** True for each of the four bootstrap values that was defaulted (printed once at first start). */
  defaulted: { adminEmail: boolean; adminPassword: boolean; clientId: boolean; clientSecret: boolean };
  /** Optional PKCS8 PEM private key (ES256) for signing tokens; otherwise one is generated and stored. */
  signingKeyPem?: string;
  accessTokenLifetimeSec: number;
  refreshTokenLifetimeSec: number;
  /** Lifetime of a session without offline_access (the access token's lifetime bounds it). */
  sessionLifetimeSec: number;
  authCodeLifetimeSec: number;
  /** Body limit for JSON/FHIR bodies (bytes, or a size string understood by body-parser). */
  bodyLimit: string;
  /** Body limit for /auth JSON bodies (sign-in, revoke): they are small, and anonymous clients may send them. */
  authBodyLimit: string;
  logLevel: string;
  /** Express `trust proxy` setting (TRUST_PROXY), so client addresses behind a proxy are recorded; off by default. */
  trustProxy: boolean | number | string;
  /** Max entries an unpaged $expand returns before answering too-costly. */
  expandMaxUnpaged: number;
  /** Largest $expand `count` (above it: 400). */
  expandMaxCount: number;
  /** Longest $expand `filter` in characters (above it: 400). */
  expandFilterMaxLength: number;
  /** Most distinct words in an $expand `filter` (above it: 400). */
  expandFilterMaxWords: number;
  /** Longest compose filter `regex` pattern in characters (above it: 400). */
  expandRegexMaxLength: number;
  /** Wall-clock budget in ms of all regex compose filters of one expansion (above it: 422 too-costly). */
  expandRegexBudgetMs: number;
  /** The most compose clauses the value sets of one expansion may have together (over it: 422). */
  expandMaxComposeClauses: number;
  /** Load the FHIR R4 core CodeSystems and ValueSets at start. */
  loadCoreTerminology: boolean;
  /** Memory budget of the code system indexes held in memory, in MiB (least recently resolved dropped beyond). */
  terminologyIndexBudgetMb: number;
  /** Allow bots' fetch() to reach loopback/private addresses (off by default). */
  botFetchAllowPrivate: boolean;
  /** Max bytes of console output kept per bot execution. */
  botLogLimit: number;
  /** Run queued async bot jobs on this instance (BOT_JOB_RUNNER, default true). */
  botJobRunner: boolean;
  /** Budgets for documents sent to /graphql (README "Limits"). */
  graphql: {
    bodyLimit: string;
    maxTokens: number;
    maxDepth: number;
    maxAliases: number;
    maxDirectives: number;
    maxCost: number;
    maxExpensiveFields: number;
    introspection: boolean;
  };
  /** Deepest nesting of a JSON request body (objects and arrays). */
  jsonMaxDepth: number;
  /** Large requests (a JSON body over 1 MiB, a read streaming a CodeSystem of 10,000 concepts or more) running at
   * once per project (over it: 429). */
  largeRequestsPerProject: number;
  /** Large requests running at once on this instance, all projects (over it: 429). */
  largeRequestsMax: number;
  /** Most concepts a CodeSystem may have to be returned whole by GraphQL or to a bot (REST streams any size). */
  inlineMaxConcepts: number;
  /** The most enumerated concepts and expansion entries one ValueSet may hold (written, inline or tx-resource). */
  valueSetMaxEntries: number;
  /** The most concepts the tx-resource CodeSystems of one $expand may hold in all (over it: 422). */
  txResourceMaxConcepts: number;
  /** Origins allowed to call /graphql from a browser (CORS); empty: no CORS headers. */
  corsOrigins: string[];
  /** Milliseconds a client has to send a whole request (headers and body); then 408 and the connection closes. */
  requestTimeoutMs: number;
  /** Milliseconds a client has to send the request headers. */
  headersTimeoutMs: number;
  /** Open connections allowed from one client address (0: no limit). */
  maxConnectionsPerAddress: number;
  /** Milliseconds in-flight requests get to finish after SIGTERM before the process exits anyway. */
  shutdownGraceMs: number;
  /** Milliseconds between event-loop delay log lines (0: never logged; still in /healthz). */
  eventLoopLogIntervalMs: number;
  /** Embedded database: sync every commit to disk (PGlite alone never syncs); see README Durability. */
  pgliteFsync: boolean;
  /** Accept PKCE `plain` besides S256 (PKCE_ALLOW_PLAIN, default true: MedplumClient on Node sends plain). */
  pkceAllowPlain: boolean;
  /** Bot executions running at once on this instance, all projects (over it: 503). */
  botMaxConcurrent: number;
  /** Bot executions running at once per project (over it: 429). */
  botProjectMaxConcurrent: number;
  /** MB of bot isolate heap limits held at once on this instance, warm or busy (over it: 503). */
  botMemoryBudgetMb: number;
  /** MB of bot isolate heap limits held at once per project (over it: 429). */
  botProjectMemoryMb: number;
  /** Bot executions one incoming request may cause, bots calling bots included (over it: 429). */
  botMaxExecutionsPerRequest: number;
  /** Asynchronous bot jobs one project may have queued at once (over it: 429). */
  botJobsQueuedPerProject: number;
  /** Largest HL7 v2 body a bot accepts, in bytes (over it: 413). */
  botHl7MaxBytes: number;
  /** log2 of scrypt's N for password hashes (PASSWORD_HASH_COST, default 17); older hashes are upgraded at sign-in. */
  passwordHashCost: number;
  /** Password hashes computed at once (PASSWORD_HASH_CONCURRENCY, default 2; each holds 128 MiB at cost 17). */
  passwordHashConcurrency: number;
  /** Failed sign-ins allowed per window: per account and address, per address, per account (any address). */
  loginThrottle: ThrottleSettings;
  /** Failed client authentications allowed per window: per client and address, per address, per client. */
  clientAuthThrottle: ThrottleSettings;
  /** createUser and inviteUser calls allowed per window, per admin and per project (over it: 429). */
  accountInviteLimit: { perAdmin: number; perProject: number; windowSec: number };
  /** Seconds an invitation stays acceptable (INVITATION_TTL, default 7 days). */
  invitationTtlSec: number;
}

/** Failure limits of a throttled check within a window of windowSec seconds. */
export interface ThrottleSettings {
  perSubjectAndAddress: number;
  perAddress: number;
  perSubject: number;
  windowSec: number;
}

const TRUE_WORDS = ['1', 'true', 'yes', 'on'];
const FALSE_WORDS = ['0', 'false', 'no', 'off'];

/** Readers of one environment: integers and booleans are strict (a typo is a startup error naming the setting). */
function readers(env: Env) {
  const int = (name: string, def: number): number => {
    const v = env[name];
    if (v === undefined || v === '') return def;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0)
      throw new ConfigError(`${name} must be a non-negative integer, got "${v}"`);
    return n;
  };
  const bool = (name: string, def: boolean): boolean => {
    const v = env[name];
    if (v === undefined || v === '') return def;
    const word = v.trim().toLowerCase();
    if (TRUE_WORDS.includes(word)) return true;
    if (FALSE_WORDS.includes(word)) return false;
    throw new ConfigError(`${name} must be true or false (or 1/0, yes/no, on/off), got "${v}"`);
  };
  return { int, bool };
}

/** PASSWORD_HASH_COST: log2 of scrypt's N, 10-20 (default 17: 2^17 is OWASP's minimum; lower only for tests). */
function hashCost(int: (name: string, def: number) => number): number {
  const n = int('PASSWORD_HASH_COST', 17);
  if (n < 10 || n > 20) throw new ConfigError(`PASSWORD_HASH_COST must be 10-20, got ${n}`);
  return n;
}

/** TRUST_PROXY as Express reads it: true/false, a hop count, or addresses/subnets (e.g. "loopback, 10.0.0.0/8"). */
function trustProxySetting(v: string | undefined): boolean | number | string {
  if (!v || v === 'false') return false;
  if (v === 'true') return true;
  if (/^\d+$/.test(v)) return Number(v);
  return v;
}

/** How loadConfig treats its input besides the environment. */
export interface LoadOptions {
  /** Settings that win over the environment (tests); normalised like the environment's. */
  overrides?: Partial<Config>;
  /** True when NODE_ENV=production was not set by the operator but defaulted by main.ts (production-env.ts): the
   * documented first-start secrets stay allowed, so `npm install && npm start` works on a fresh clone. */
  productionDefaulted?: boolean;
}

/** Reads the configuration from `env`, applies overrides, normalises, validates and freezes it. Throws
 * ConfigError naming the setting when a value is invalid. */
export function loadConfig(env: Env, opts: LoadOptions = {}): Readonly<Config> {
  const config = normalise({ ...fromEnv(env), ...opts.overrides });
  if (env.NODE_ENV === 'production' && !opts.productionDefaulted) refuseDefaultSecrets(config);
  return deepFreeze(config);
}

/** Normalisation applied after overrides, so an override is held to the same form as an environment value. */
function normalise(config: Config): Config {
  // BASE_URL's default names the port, the overridden one included.
  const baseUrl = config.baseUrl || `http://localhost:${config.port}/`;
  return { ...config, baseUrl: normaliseBaseUrl(baseUrl), dataDir: path.resolve(config.dataDir) };
}

/** NODE_ENV=production: the documented default admin password and client secret are public knowledge. */
function refuseDefaultSecrets(config: Config): void {
  const bad = [
    ...(config.adminPassword === DEFAULT_ADMIN_PASSWORD ? ['ADMIN_PASSWORD'] : []),
    ...(config.clientSecret === DEFAULT_CLIENT_SECRET ? ['CLIENT_SECRET'] : []),
  ];
  if (bad.length > 0) {
    throw new ConfigError(
      `NODE_ENV=production refuses the documented default ${bad.join(' and ')}: set ${bad.length > 1 ? 'them' : 'it'} ` +
        'to a secret of your own (README "Configuration")',
    );
  }
}

/** Freezes an object and everything it holds (config is read by many modules; none may change it). */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** The configuration the environment alone describes. */
function fromEnv(env: Env): Config {
  const { int, bool } = readers(env);
  const port = int('PORT', 8103);
  const host = env.HOST ?? '0.0.0.0';
  // Empty: defaulted from the port in normalise(), after overrides.
  const baseUrl = env.BASE_URL ?? '';
  const defaulted = {
    adminEmail: !env.ADMIN_EMAIL,
    adminPassword: !env.ADMIN_PASSWORD,
    clientId: !env.CLIENT_ID,
    clientSecret: !env.CLIENT_SECRET,
  };
  return {
    port,
    host,
    baseUrl,
    dataDir: env.DATA_DIR || './data',
    databaseUrl: env.DATABASE_URL || undefined,
    databaseSchema: env.DATABASE_SCHEMA || undefined,
    pgliteSocketPort: env.PGLITE_SOCKET_PORT ? int('PGLITE_SOCKET_PORT', 0) : undefined,
    adminEmail: env.ADMIN_EMAIL ?? 'admin@example.com',
    adminPassword: env.ADMIN_PASSWORD ?? DEFAULT_ADMIN_PASSWORD,
    clientId: env.CLIENT_ID ?? 'f54370de-eaf3-4d81-a17e-24860f667912',
    clientSecret: env.CLIENT_SECRET ?? DEFAULT_CLIENT_SECRET,
    defaulted,
    signingKeyPem: env.SIGNING_KEY_PEM || undefined,
    accessTokenLifetimeSec: int('ACCESS_TOKEN_LIFETIME', 3600),
    refreshTokenLifetimeSec: int('REFRESH_TOKEN_LIFETIME', 14 * 24 * 3600),
    sessionLifetimeSec: int('SESSION_LIFETIME', 3600),
    authCodeLifetimeSec: int('AUTH_CODE_LIFETIME', 60),
    bodyLimit: env.BODY_LIMIT ?? '50mb',
    authBodyLimit: env.AUTH_BODY_LIMIT ?? '64kb',
    logLevel: env.LOG_LEVEL ?? 'info',
    trustProxy: trustProxySetting(env.TRUST_PROXY),
    expandMaxUnpaged: int('EXPAND_MAX_UNPAGED', 10000),
    expandMaxCount: int('EXPAND_MAX_COUNT', 10000),
    expandFilterMaxLength: int('EXPAND_FILTER_MAX_CHARS', 1000),
    expandFilterMaxWords: int('EXPAND_FILTER_MAX_WORDS', 20),
    expandRegexMaxLength: int('EXPAND_REGEX_MAX_LENGTH', 1000),
    expandRegexBudgetMs: int('EXPAND_REGEX_BUDGET_MS', 2000),
    expandMaxComposeClauses: int('EXPAND_MAX_COMPOSE_CLAUSES', 1000),
    loadCoreTerminology: bool('LOAD_CORE_TERMINOLOGY', true),
    terminologyIndexBudgetMb: int('TERMINOLOGY_INDEX_BUDGET_MB', 1024),
    botFetchAllowPrivate: bool('BOT_FETCH_ALLOW_PRIVATE', false),
    botLogLimit: int('BOT_LOG_LIMIT', 64 * 1024),
    botJobRunner: bool('BOT_JOB_RUNNER', true),
    graphql: {
      bodyLimit: env.GRAPHQL_BODY_LIMIT ?? '256kb',
      maxTokens: int('GRAPHQL_MAX_TOKENS', 2000),
      maxDepth: int('GRAPHQL_MAX_DEPTH', 10),
      maxAliases: int('GRAPHQL_MAX_ALIASES', 15),
      maxDirectives: int('GRAPHQL_MAX_DIRECTIVES', 20),
      maxCost: int('GRAPHQL_MAX_COST', 5000),
      maxExpensiveFields: int('GRAPHQL_MAX_EXPENSIVE_FIELDS', 4),
      introspection: bool('GRAPHQL_INTROSPECTION', env.NODE_ENV !== 'production'),
    },
    jsonMaxDepth: int('JSON_MAX_DEPTH', 256),
    largeRequestsPerProject: int('LARGE_REQUESTS_PER_PROJECT', 2),
    largeRequestsMax: int('LARGE_REQUESTS_MAX', 4),
    inlineMaxConcepts: int('INLINE_MAX_CONCEPTS', 20_000),
    txResourceMaxConcepts: int('TX_RESOURCE_MAX_CONCEPTS', 20_000),
    valueSetMaxEntries: int('VALUESET_MAX_ENTRIES', 50_000),
    corsOrigins: (env.CORS_ORIGINS ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean),
    requestTimeoutMs: int('REQUEST_TIMEOUT', 30_000),
    headersTimeoutMs: int('HEADERS_TIMEOUT', 10_000),
    maxConnectionsPerAddress: int('MAX_CONNECTIONS_PER_ADDRESS', 100),
    shutdownGraceMs: int('SHUTDOWN_GRACE', 20_000),
    eventLoopLogIntervalMs: int('EVENT_LOOP_LOG_INTERVAL', 60_000),
    pgliteFsync: bool('PGLITE_FSYNC', true),
    pkceAllowPlain: bool('PKCE_ALLOW_PLAIN', true),
    botMaxConcurrent: int('BOT_MAX_CONCURRENT', 64),
    botProjectMaxConcurrent: int('BOT_PROJECT_MAX_CONCURRENT', 16),
    botMemoryBudgetMb: int('BOT_MEMORY_BUDGET_MB', 2048),
    botProjectMemoryMb: int('BOT_PROJECT_MEMORY_MB', 1024),
    botMaxExecutionsPerRequest: int('BOT_MAX_EXECUTIONS_PER_REQUEST', 50),
    botJobsQueuedPerProject: int('BOT_JOBS_QUEUED_PER_PROJECT', 1000),
    botHl7MaxBytes: int('BOT_HL7_MAX_BYTES', 4 * 1024 * 1024),
    passwordHashCost: hashCost(int),
    passwordHashConcurrency: Math.max(1, int('PASSWORD_HASH_CONCURRENCY', 2)),
    loginThrottle: {
      perSubjectAndAddress: int('LOGIN_MAX_FAILURES', 5),
      perAddress: int('LOGIN_MAX_FAILURES_PER_ADDRESS', 50),
      perSubject: int('LOGIN_MAX_FAILURES_PER_ACCOUNT', 20),
      windowSec: int('LOGIN_THROTTLE_WINDOW', 900),
    },
    clientAuthThrottle: {
      perSubjectAndAddress: int('CLIENT_AUTH_MAX_FAILURES', 10),
      perAddress: int('CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS', 50),
      perSubject: int('CLIENT_AUTH_MAX_FAILURES_PER_CLIENT', 100),
      windowSec: int('CLIENT_AUTH_THROTTLE_WINDOW', 60),
    },
    accountInviteLimit: {
      perAdmin: int('ACCOUNT_INVITES_PER_ADMIN', 50),
      perProject: int('ACCOUNT_INVITES_PER_PROJECT', 200),
      windowSec: int('ACCOUNT_INVITE_WINDOW', 900),
    },
    invitationTtlSec: int('INVITATION_TTL', 7 * 24 * 3600),
  };
}
