// Starts a real server for a test file: in-memory PGlite by default, or a fresh schema on TEST_DATABASE_URL.
// useTestServer for the server of a file or describe block, withTestServer for one test's own, useTestDatabase
// (database.ts) for servers and CLIs that share a database; processes.ts has the same for server processes.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino, { type Logger } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { startServer, type RunningServer } from '../../src/server.js';
import type { Config } from '../../src/config.js';

export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'admin-password-123';
export const CLIENT_ID = '0c5bd8a0-3b0a-4a43-8d4a-4b3d9a8e1a11';
export const CLIENT_SECRET = 'test-client-secret';

export interface TestServer extends RunningServer {
  /** Base URL, with trailing slash. */
  base: string;
  /** PostgreSQL schema when running on PostgreSQL (shared by every instance started with the same schema). */
  schema?: string;
}

/** True when the suite runs on PostgreSQL. */
export const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

/** A fresh schema name for a PostgreSQL test database. */
export function newSchemaName(): string {
  return `t_${crypto.randomBytes(6).toString('hex')}`;
}

/** What a test server is started with (see startTestServer). */
export interface TestServerOptions {
  /** Settings over the test defaults. */
  config?: Partial<Config>;
  /** A PostgreSQL schema another instance already uses (default: a fresh one). */
  schema?: string;
  /** Keep the embedded database on disk here (default: in memory). */
  dataDir?: string;
  /** Keep the embedded database on disk in a temporary directory, removed at close (default: in memory). */
  onDisk?: boolean;
  /** Where the server logs (default: nowhere, or TEST_LOG_LEVEL to stdout): for a test that reads its log lines. */
  logger?: Logger;
}

/** Starts a server for tests; close() closes it, removes its temporary data directory and drops the schema it made.
 * Pass `schema` to start a second instance on the same PostgreSQL schema (not dropped then), and `dataDir` to keep
 * the embedded database on disk there. useTestServer, withTestServer and useTestDatabase call this. */
export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const schema = onPostgres ? (opts.schema ?? newSchemaName()) : undefined;
  const ownSchema = opts.schema === undefined ? schema : undefined;
  // On PostgreSQL the data folder holds only index files: a temporary one, unless the test gives its own.
  const tempDir =
    (onPostgres || opts.onDisk) && !opts.dataDir
      ? fs.mkdtempSync(path.join(os.tmpdir(), 'fhir-test-data-'))
      : undefined;
  const cleanUp = async (): Promise<void> => {
    if (tempDir) fs.rmSync(tempDir, { recursive: true, force: true });
    await dropSchema(ownSchema);
  };
  let running: RunningServer;
  try {
    running = await startServer({
      env: process.env,
      inMemory: !onPostgres && !opts.dataDir && !opts.onDisk,
      logger: opts.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
      config: {
        port: 0,
        host: '127.0.0.1',
        adminEmail: ADMIN_EMAIL,
        adminPassword: ADMIN_PASSWORD,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        defaulted: { adminEmail: false, adminPassword: false, clientId: false, clientSecret: false },
        databaseUrl: process.env.TEST_DATABASE_URL,
        databaseSchema: schema,
        loadCoreTerminology: false,
        ...(opts.dataDir || tempDir ? { dataDir: opts.dataDir ?? tempDir } : {}),
        ...opts.config,
      },
    });
  } catch (err) {
    await cleanUp();
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    ...running,
    base: running.url,
    schema,
    // Once only: a test may close a server that its database handle closes again at the end.
    close() {
      closing ??= running.close().then(cleanUp);
      return closing;
    },
  };
}

/** The server of a test file or describe block (useTestServer): read its fields inside tests and later hooks. */
export interface UsedTestServer extends Pick<TestServer, 'base' | 'url' | 'services' | 'server' | 'schema'> {
  /** An access token of the first start's admin (with `signIn: true`). */
  readonly token: string;
}

/** The set-up most test files share: starts a server in beforeAll (and signs its admin in with `signIn: true`);
 * closes it and drops its PostgreSQL schema in afterAll. Call at the top of a file or of a describe block; hooks
 * registered after it run after the server is up. */
export function useTestServer(opts: TestServerOptions & { signIn?: boolean } = {}): UsedTestServer {
  let running: TestServer | undefined;
  let token: string | undefined;
  beforeAll(async () => {
    running = await startTestServer(opts);
    if (opts.signIn) token = (await signIn(running.base)).access_token;
  });
  afterAll(async () => {
    await running?.close();
  });
  const started = (): TestServer => {
    if (!running)
      throw new Error('useTestServer: the server starts in beforeAll; use it inside a test or hook');
    return running;
  };
  return {
    get base() {
      return started().base;
    },
    get url() {
      return started().url;
    },
    get services() {
      return started().services;
    },
    get server() {
      return started().server;
    },
    get schema() {
      return started().schema;
    },
    get token() {
      if (token === undefined) throw new Error('useTestServer: pass { signIn: true } for a token');
      return token;
    },
  };
}

/** Runs `fn` with a server of its own (special settings for one test): closes it and drops its schema whatever
 * happens. */
export async function withTestServer<T>(
  opts: TestServerOptions,
  fn: (server: TestServer) => Promise<T>,
): Promise<T> {
  const server = await startTestServer(opts);
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

/** Drops a PostgreSQL test schema (call after every instance using it is closed). */
export async function dropSchema(schema: string | undefined): Promise<void> {
  if (!schema || !process.env.TEST_DATABASE_URL) return;
  const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await c.end();
}

export interface Tokens {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  loginId: string;
}

/** Signs in with email/password through /auth/login + /oauth2/token (PKCE S256), as MedplumClient does. */
export async function signIn(
  base: string,
  email = ADMIN_EMAIL,
  password = ADMIN_PASSWORD,
  opts: { userAgent?: string; scope?: string; forwardedFor?: string } = {},
): Promise<Tokens> {
  const verifier = crypto.randomBytes(32).toString('base64url');
  const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.userAgent) headers['user-agent'] = opts.userAgent;
  if (opts.forwardedFor) headers['x-forwarded-for'] = opts.forwardedFor;
  const loginRes = await fetch(`${base}auth/login`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      email,
      password,
      codeChallenge: challenge,
      codeChallengeMethod: 'S256',
      scope: opts.scope,
    }),
  });
  if (loginRes.status !== 200) throw new Error(`login failed: ${loginRes.status} ${await loginRes.text()}`);
  const { login, code } = (await loginRes.json()) as { login: string; code: string };
  const tokenRes = await fetch(`${base}oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier }),
  });
  if (tokenRes.status !== 200) throw new Error(`token failed: ${tokenRes.status} ${await tokenRes.text()}`);
  const tokens = (await tokenRes.json()) as Omit<Tokens, 'loginId'>;
  return { ...tokens, loginId: login };
}

/** Calls the server with an optional bearer token and JSON body; returns status, headers and parsed body. */
export async function call(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: string } = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/fhir+json';
  }
  const res = await fetch(`${base}${path.replace(/^\//, '')}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  // `any` keeps test assertions on response bodies short; every use is checked by an expect().
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see the return type
  return { status: res.status, headers: res.headers, body: parsed as any, text };
}
