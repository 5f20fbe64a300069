// Every setting, in one table: its environment variable, its Config key, how it is read (type, default, checks)
// and the line that documents it. The Config type is derived from the table (src/config.ts), loadConfig reads it,
// and docs/configuration.md is generated from it (`npm run docs:config`; a test fails when the page is stale).
// A new setting is one entry here. Grouped by topic: each topic is one section of the page. The row's shape and
// the readers are in readers.ts; the terminology, bots and GraphQL topics in feature-settings.ts.
import {
  baseUrl,
  bool,
  directory,
  int,
  list,
  optionalInt,
  optionalText,
  size,
  text,
  trustProxy,
  type OtherVariable,
  type ServerSetting,
  type Topic,
} from './readers.js';
import { FEATURE_TOPICS } from './feature-settings.js';

/** The first-start defaults the page documents; NODE_ENV=production refuses the two secrets. */
export const DEFAULT_ADMIN_PASSWORD = 'medplum_admin';
export const DEFAULT_CLIENT_SECRET = 'change-me-client-secret';

/** Every setting, by topic. */
export const TOPICS = [
  {
    title: 'Server',
    about: 'Where the server listens, how it names itself, and whom it trusts.',
    settings: [
      { env: 'PORT', key: 'port', read: int(8103), doc: 'HTTP port' },
      { env: 'HOST', key: 'host', read: text('0.0.0.0'), doc: 'listen address' },
      {
        env: 'BASE_URL',
        key: 'baseUrl',
        read: baseUrl('port'),
        doc: 'public base URL; the FHIR base is `{BASE_URL}fhir/R4` and it is the token issuer',
      },
      {
        env: 'TRUST_PROXY',
        key: 'trustProxy',
        read: trustProxy(),
        doc:
          'Express `trust proxy`: `true`, a hop count, or addresses/subnets (`loopback, 10.0.0.0/8`), so sessions ' +
          'record client addresses behind a proxy',
      },
      {
        env: 'CORS_ORIGINS',
        key: 'corsOrigins',
        read: list(),
        doc:
          'comma-separated origins allowed to call `/graphql` and the REST paths (`/fhir`, `/auth`, `/oauth2`) from ' +
          'a browser (CORS with credentials: a browser app signed in through `/oauth2/authorize`); unset: no CORS ' +
          'headers',
      },
      {
        env: 'NODE_ENV',
        type: 'string',
        defaultText: '`production`',
        doc:
          '`production`: GraphQL introspection for signed-in callers only (`GRAPHQL_INTROSPECTION`) and, when the operator sets it, the ' +
          'default `ADMIN_PASSWORD` and `CLIENT_SECRET` refused; the server process sets it when it is unset',
      },
    ],
  },
  {
    title: 'Database',
    about: 'The embedded database (PGlite, in `DATA_DIR`) unless `DATABASE_URL` names a PostgreSQL server.',
    settings: [
      {
        env: 'DATA_DIR',
        key: 'dataDir',
        read: directory('./data'),
        doc: 'embedded database directory (PGlite, `DATA_DIR/pglite`)',
      },
      {
        env: 'DATABASE_URL',
        key: 'databaseUrl',
        read: optionalText('URL'),
        doc: '`postgresql://...`: use PostgreSQL instead of the embedded database',
      },
      {
        env: 'DATABASE_SCHEMA',
        key: 'databaseSchema',
        read: optionalText(),
        doc: "PostgreSQL schema to use (default: the connection's search path)",
      },
      {
        env: 'PGLITE_SOCKET_PORT',
        key: 'pgliteSocketPort',
        read: optionalInt(),
        doc: 'also serve the embedded database on `127.0.0.1:<port>` over the PostgreSQL protocol (Studio, psql)',
      },
      {
        env: 'PGLITE_FSYNC',
        key: 'pgliteFsync',
        read: bool(true),
        doc:
          'embedded database: every commit is synced to disk before it is acknowledged (PGlite alone never ' +
          'syncs); `false` turns it off. See [Durability](operations.md#durability-fsync)',
      },
      {
        env: 'PGLITE_SHARED_BUFFERS_MB',
        key: 'pgliteSharedBuffersMb',
        read: int(32, { min: 1, max: 1024 }),
        doc:
          "embedded database: PostgreSQL's `shared_buffers` in MiB, most of what it keeps resident (PGlite's own " +
          'default is 128). See [Start and memory](performance.md#start-and-memory)',
      },
      {
        env: 'STUDIO_PORT',
        only: '`npm run studio`',
        type: 'integer',
        defaultText: '`5555`',
        doc: 'its port on 127.0.0.1 (see [Prisma Studio](operations.md#prisma-studio))',
      },
    ],
  },
  {
    title: 'Sign-in and tokens',
    about: "The first project's admin and client (created on first start only), tokens, sessions, passwords.",
    settings: [
      {
        env: 'ADMIN_EMAIL',
        key: 'adminEmail',
        read: text('admin@example.com'),
        doc: 'first admin user, created on first start only',
        shownAtFirstStart: true,
      },
      {
        env: 'ADMIN_PASSWORD',
        key: 'adminPassword',
        read: text(DEFAULT_ADMIN_PASSWORD),
        doc: 'its password (change it)',
        shownAtFirstStart: true,
        secret: true,
      },
      {
        env: 'CLIENT_ID',
        key: 'clientId',
        read: text('f54370de-eaf3-4d81-a17e-24860f667912'),
        doc: "first client application's id (a UUID)",
        shownAtFirstStart: true,
      },
      {
        env: 'CLIENT_SECRET',
        key: 'clientSecret',
        read: text(DEFAULT_CLIENT_SECRET),
        doc:
          'its secret (change it). Read at the first start only: later, `rotateClientSecret` replaces it ' +
          '(see [client applications](sessions-and-security.md#client-applications))',
        shownAtFirstStart: true,
        secret: true,
      },
      {
        env: 'PROJECT_ADMIN_PASSWORD',
        only: '`npm run project:create`',
        type: 'string',
        defaultText: '(unset)',
        doc: "the new project admin's password; unset: the first line of stdin (never the command line)",
      },
      {
        env: 'SIGNING_KEY_PEM',
        key: 'signingKeyPem',
        read: optionalText('PEM'),
        doc: 'ES256 PKCS#8 private key for tokens; otherwise one is generated on first start and kept in the database',
      },
      { env: 'ACCESS_TOKEN_LIFETIME', key: 'accessTokenLifetimeSec', read: int(3600), doc: 'seconds' },
      {
        env: 'SESSION_LIFETIME',
        key: 'sessionLifetimeSec',
        read: int(3600),
        doc: 'seconds a session without `offline_access` lives',
      },
      {
        env: 'REFRESH_TOKEN_LIFETIME',
        key: 'refreshTokenLifetimeSec',
        read: int(14 * 24 * 3600),
        doc: 'seconds (14 days) an `offline_access` session lives after its last refresh',
      },
      {
        env: 'AUTH_CODE_LIFETIME',
        key: 'authCodeLifetimeSec',
        read: int(60),
        doc: 'seconds an authorization code is good for',
      },
      {
        env: 'PKCE_ALLOW_PLAIN',
        key: 'pkceAllowPlain',
        read: bool(true),
        doc: 'accept PKCE `plain` besides `S256` (`MedplumClient` on Node sends `plain`); `false`: `S256` only',
      },
      {
        env: 'PASSWORD_HASH_COST',
        key: 'passwordHashCost',
        read: int(15, { min: 10, max: 20 }),
        doc:
          "log2 of scrypt's N for password hashes (r = 8): 15 = 32 MiB per hash. With `PASSWORD_HASH_PARALLELISM` " +
          "3, one of OWASP's equivalents of its scrypt minimum (N=2^17, p=1: 128 MiB). Lower only for tests; a " +
          'hash made with other parameters is replaced at the next sign-in',
      },
      {
        env: 'PASSWORD_HASH_PARALLELISM',
        key: 'passwordHashParallelism',
        read: int(3, { min: 1, max: 16 }),
        doc:
          "scrypt's p for password hashes: the work of a hash grows with it, its memory does not (OWASP: N=2^16 " +
          'with p=2, 2^15 with 3, 2^14 with 5)',
      },
      {
        env: 'PASSWORD_MIN_LENGTH',
        key: 'passwordMinLength',
        read: int(8, { min: 8, max: 64 }),
        doc:
          'fewest characters of a new password (NIST SP 800-63B; its revision 4 asks 15 where the password is ' +
          'the only factor). A new password also may not be one of 49,233 common passwords or the account address',
      },
      {
        env: 'PASSWORD_RESET_TTL',
        key: 'passwordResetTtlSec',
        read: int(3600, { min: 60, max: 7 * 24 * 3600 }),
        doc: 'seconds a password reset link works (once); a newer link for the account ends older ones',
      },
      {
        env: 'PASSWORD_RESET_URL',
        key: 'passwordResetUrl',
        read: optionalText('URL'),
        doc:
          'the page a reset email links to, with `?id=...&secret=...` (a front end of yours); unset: the ' +
          "server's own page, `BASE_URL` + `auth/setpassword`",
      },
      {
        env: 'SMTP_URL',
        key: 'smtpUrl',
        read: optionalText('URL'),
        doc:
          '`smtp://user:password@host:587` or `smtps://...:465` (nodemailer): sends password reset emails; unset, ' +
          '`POST /auth/resetpassword` answers `501` and a server administrator issues links with ' +
          '`npm run user:reset-link`',
      },
      {
        env: 'SMTP_FROM',
        key: 'smtpFrom',
        read: optionalText('address'),
        doc: 'the sender of those emails (default `no-reply@` the host of `BASE_URL`)',
      },
      {
        env: 'PASSWORD_HASH_CONCURRENCY',
        key: 'passwordHashConcurrency',
        read: int(2, { atLeast: 1 }),
        doc: 'password hashes computed at once; up to 32 per slot wait, beyond that a sign-in gets `503`',
      },
      {
        env: 'INVITATION_TTL',
        key: 'invitationTtlSec',
        read: int(7 * 24 * 3600),
        doc: 'seconds an invitation stays acceptable (7 days); inviting again renews it',
      },
      {
        env: 'MFA_ISSUER',
        key: 'mfaIssuer',
        read: optionalText('name'),
        doc:
          'the issuer an authenticator app shows for a second factor (`otpauth://` URI); default: the host name of ' +
          '`BASE_URL`',
      },
      {
        env: 'MFA_LOGIN_TTL',
        key: 'mfaLoginTtlSec',
        read: int(300, { min: 30, max: 3600 }),
        doc:
          'seconds a sign-in that answered `mfaRequired` (or `mfaEnrollRequired`) waits for its second factor; ' +
          'it holds no authorization code until then',
      },
      {
        env: 'CLIENT_SECRET_ROTATION_GRACE',
        key: 'clientSecretRotationGraceSec',
        read: int(24 * 3600),
        doc:
          'seconds (24 hours) a client secret replaced by `rotateClientSecret` is still accepted beside the new ' +
          'one; `0`: refused at once',
      },
      {
        env: 'AUDIT_RETENTION_DAYS',
        key: 'auditRetentionDays',
        read: int(365, { min: 0, max: 36500 }),
        doc:
          'days the audit log (`auditEvents`) keeps a record; older ones are removed hourly, 1000 at a time; `0`: ' +
          'kept forever',
      },
    ],
  },
  {
    title: 'Throttling',
    about:
      'Failures (and account calls) counted per window; past a limit, `429` with `Retry-After` (see below).',
    settings: [
      {
        env: 'LOGIN_MAX_FAILURES',
        key: 'loginThrottle.perSubjectAndAddress',
        read: int(5),
        doc: 'failed sign-ins per account and client address per window',
      },
      {
        env: 'LOGIN_MAX_FAILURES_PER_ADDRESS',
        key: 'loginThrottle.perAddress',
        read: int(50),
        doc: 'failed sign-ins per client address (any account) per window',
      },
      {
        env: 'LOGIN_MAX_FAILURES_PER_ACCOUNT',
        key: 'loginThrottle.perSubject',
        read: int(20),
        doc: 'failed sign-ins per account (any address) per window',
      },
      {
        env: 'LOGIN_THROTTLE_WINDOW',
        key: 'loginThrottle.windowSec',
        read: int(900),
        doc: 'seconds a sign-in failure counts',
      },
      {
        env: 'MFA_MAX_FAILURES',
        key: 'mfaThrottle.perSubjectAndAddress',
        read: int(5),
        doc: 'wrong second-factor codes per account and client address per window',
      },
      {
        env: 'MFA_MAX_FAILURES_PER_ADDRESS',
        key: 'mfaThrottle.perAddress',
        read: int(50),
        doc: 'wrong second-factor codes per client address (any account) per window',
      },
      {
        env: 'MFA_MAX_FAILURES_PER_ACCOUNT',
        key: 'mfaThrottle.perSubject',
        read: int(10),
        doc: 'wrong second-factor codes per account (any address) per window',
      },
      {
        env: 'MFA_THROTTLE_WINDOW',
        key: 'mfaThrottle.windowSec',
        read: int(900),
        doc: 'seconds a wrong second-factor code counts',
      },
      {
        env: 'CLIENT_AUTH_MAX_FAILURES',
        key: 'clientAuthThrottle.perSubjectAndAddress',
        read: int(10),
        doc: 'failed client-secret checks per client and address per window',
      },
      {
        env: 'CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS',
        key: 'clientAuthThrottle.perAddress',
        read: int(50),
        doc: 'failed client-secret checks per address (any client) per window',
      },
      {
        env: 'CLIENT_AUTH_MAX_FAILURES_PER_CLIENT',
        key: 'clientAuthThrottle.perSubject',
        read: int(100),
        doc: 'failed client-secret checks per client (any address) per window',
      },
      {
        env: 'CLIENT_AUTH_THROTTLE_WINDOW',
        key: 'clientAuthThrottle.windowSec',
        read: int(60),
        doc: 'seconds a client-secret failure counts',
      },
      {
        env: 'ACCOUNT_INVITES_PER_ADMIN',
        key: 'accountInviteLimit.perAdmin',
        read: int(50),
        doc: '`createUser` + `inviteUser` calls per acting admin per window (over it: `429` with `Retry-After`)',
      },
      {
        env: 'ACCOUNT_INVITES_PER_PROJECT',
        key: 'accountInviteLimit.perProject',
        read: int(200),
        doc: '`createUser` + `inviteUser` calls per project (all its admins) per window',
      },
      {
        env: 'ACCOUNT_INVITE_WINDOW',
        key: 'accountInviteLimit.windowSec',
        read: int(900),
        doc: 'seconds a `createUser`/`inviteUser` call counts',
      },
    ],
  },
  ...FEATURE_TOPICS,
  {
    title: 'Request limits',
    about: 'What one request or one client may send, and for how long, whatever it asks for.',
    settings: [
      {
        env: 'BODY_LIMIT',
        key: 'bodyLimit',
        read: size('50mb'),
        doc: 'largest JSON/FHIR request body; larger bodies get 413',
      },
      {
        env: 'AUTH_BODY_LIMIT',
        key: 'authBodyLimit',
        read: size('64kb'),
        doc: 'largest `/auth/*` JSON body (sign-in, revoke; `/auth/login` takes anonymous requests); 413 above it',
      },
      {
        env: 'RESOURCE_MAX_CHARS',
        key: 'resourceMaxChars',
        read: int(1024 * 1024),
        doc:
          "longest stored resource, in characters of JSON, without a CodeSystem's concepts (rows of their own): every " +
          'write of it is one database statement (on the embedded database, on the event loop: ~60 ms per MB); ' +
          'over it a write gets 422',
      },
      {
        env: 'RESOURCE_MAX_ELEMENTS',
        key: 'resourceMaxElements',
        read: int(300_000),
        doc:
          'most elements (property values and array items, nested ones included) of a stored resource, without a ' +
          "CodeSystem's concepts: each write is checked against the FHIR R4 definition in one pass; over it 422",
      },
      {
        env: 'JSON_MAX_DEPTH',
        key: 'jsonMaxDepth',
        read: int(256),
        doc: 'deepest nesting (objects and arrays) of any JSON request body',
      },
      {
        env: 'LARGE_REQUESTS_PER_PROJECT',
        key: 'largeRequestsPerProject',
        read: int(2),
        doc:
          'large requests at once per project (a JSON body over 1 MiB, a read streaming 10,000+ concepts); over ' +
          'it: 429, `Retry-After`',
      },
      {
        env: 'LARGE_REQUESTS_MAX',
        key: 'largeRequestsMax',
        read: int(4),
        doc:
          'large requests at once on this instance, all projects (each streamed read on PostgreSQL holds a pool ' +
          'connection of 10)',
      },
      {
        env: 'REQUEST_TIMEOUT',
        key: 'requestTimeoutMs',
        read: int(30_000),
        doc:
          'milliseconds a client has to send a whole request (headers and body); then 408 and the connection is ' +
          'closed',
      },
      {
        env: 'HEADERS_TIMEOUT',
        key: 'headersTimeoutMs',
        read: int(10_000),
        doc: 'milliseconds a client has to send the request headers; then 408',
      },
      {
        env: 'MAX_CONNECTIONS_PER_ADDRESS',
        key: 'maxConnectionsPerAddress',
        read: int(100),
        doc: 'open connections from one client address; more are closed at once (0: no limit)',
      },
    ],
  },
  {
    title: 'Operations',
    about: 'Logging, the event-loop watchdog, and shutdown.',
    settings: [
      { env: 'LOG_LEVEL', key: 'logLevel', read: text('info'), doc: 'pino level' },
      {
        env: 'EVENT_LOOP_LOG_INTERVAL',
        key: 'eventLoopLogIntervalMs',
        read: int(60_000),
        doc: 'milliseconds between event-loop delay log lines (`0`: not logged; always in `/healthz`)',
      },
      {
        env: 'SHUTDOWN_GRACE',
        key: 'shutdownGraceMs',
        read: int(20_000),
        doc: 'milliseconds in-flight requests get to finish after `SIGTERM`',
      },
    ],
  },
] as const satisfies readonly Topic[];

/** Every variable of the table, in page order. */
export const VARIABLES: readonly (ServerSetting | OtherVariable)[] = TOPICS.flatMap(
  (t): readonly (ServerSetting | OtherVariable)[] => t.settings,
);

/** The settings loadConfig reads (the variables with a Config key). */
export const SETTINGS: readonly ServerSetting[] = VARIABLES.filter((v): v is ServerSetting => 'key' in v);
