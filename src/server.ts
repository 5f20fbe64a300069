// Composition root: opens the database, builds the features, the services GraphQL reaches and the HTTP server.
// Used by main.ts and the tests.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pino, { type Logger } from 'pino';
import { loadConfig, type Config, type Env } from './config.js';
import { isNewEmbeddedDatabase, openDatabase, probeDatabase, type Database } from './db/database.js';
import { ResourceRegistry } from './fhir/registry.js';
import { LargeRequests } from './fhir/large-requests.js';
import { createContext, type Services } from './graphql/context.js';
import { executor } from './graphql/executor.js';
import type { HttpApi, Readiness } from './rest/api.js';
import { boundedLogDestination, type LogDestination } from './rest/log-destination.js';
import { createExpressApp } from './rest/app.js';
import { createHttpServer } from './rest/http-server.js';
import { limitConnectionsPerAddress } from './rest/connection-limit.js';
import { closeConnectionsWhenDraining, drain } from './rest/drain.js';
import { startEventLoopWatchdog } from './rest/event-loop.js';
import type { Feature } from './rest/feature.js';
import { authFeature, prehashAdminPassword } from './auth/feature.js';
import { botsFeature } from './bots/feature.js';
import { fhirFeature } from './fhir/feature.js';
import { terminologyFeature } from './terminology/feature.js';
import { coreTerminologyMarker } from './terminology/core.js';

export interface RunningServer {
  services: Services;
  server: http.Server;
  url: string;
  close(): Promise<void>;
}

export interface StartOptions {
  /** The environment the settings are read from (main.ts: process.env). */
  env: Env;
  /** Settings that win over the environment (tests). */
  config?: Partial<Config>;
  /** NODE_ENV=production was defaulted by main.ts, not set by the operator (see loadConfig). */
  productionDefaulted?: boolean;
  logger?: Logger;
  /** In-memory PGlite (tests); otherwise PGlite in config.dataDir or PostgreSQL. */
  inMemory?: boolean;
}

/** Starts a server: database, migrations, first-start bootstrap, services, HTTP listener. */
export async function startServer(opts: StartOptions): Promise<RunningServer> {
  const load = (overrides?: Partial<Config>) =>
    loadConfig(opts.env, { overrides, productionDefaulted: opts.productionDefaulted });
  const requested = load(opts.config);
  const app = express();
  const server = createHttpServer(app, requested);
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, requested.host, () => resolve());
    });
  // Port 0 (tests): bind first, so the frozen config (BASE_URL's default included) names the real port. Nobody
  // can connect before startServer returns the port; a fixed port is bound last, when everything is ready.
  const bindEarly = requested.port === 0;
  if (bindEarly) await listen(0);
  // Until the server listens, nothing may keep the event loop alive between two awaits (PGlite's statements run
  // synchronously). Node then waits, before going on, for every background task of V8 to end: the WebAssembly
  // tier-up of PGlite's PostgreSQL held each start for 0.2-0.4 s (docs/performance.md, Start and memory).
  const keepLoopAlive = setInterval(() => {}, 60_000);
  try {
    const config = bindEarly
      ? load({ ...opts.config, port: (server.address() as AddressInfo).port })
      : requested;
    return await assemble(opts, config, app, server, () =>
      bindEarly ? Promise.resolve() : listen(config.port),
    );
  } catch (err) {
    if (bindEarly) server.close();
    throw err;
  } finally {
    clearInterval(keepLoopAlive);
  }
}

/** Builds the services and the app on a loaded config, then listens (unless already bound). */
async function assemble(
  opts: StartOptions,
  config: Readonly<Config>,
  app: express.Express,
  server: http.Server,
  listen: () => Promise<void>,
): Promise<RunningServer> {
  // Never blocks on stdout (a stopped reader must not hold requests or shutdown): see log-destination.ts.
  const logDestination = opts.logger ? undefined : boundedLogDestination(process.stdout);
  const logger =
    opts.logger ??
    pino(
      {
        level: config.logLevel,
        redact: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.token'],
      },
      logDestination,
    );
  // A first start on an empty embedded database hashes the admin's password (scrypt, on the thread pool): begun
  // now, the hash and the database's opening (on this thread) overlap.
  const adminPasswordHash =
    !config.databaseUrl && !opts.inMemory && isNewEmbeddedDatabase(config.dataDir)
      ? prehashAdminPassword(config)
      : undefined;
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    dataDir: opts.inMemory ? undefined : config.dataDir,
    pgliteSocketPort: config.pgliteSocketPort,
    fsync: config.pgliteFsync,
    sharedBuffersMb: config.pgliteSharedBuffersMb,
    // With the core terminology already in (its marker matching the installed definitions) or without it.
    template: config.loadCoreTerminology
      ? { name: 'core', facts: { coreTerminology: coreTerminologyMarker() } }
      : { name: 'schema' },
    logger,
  });
  // Tests on an in-memory database keep no files beside it.
  const large = new LargeRequests({
    perProject: config.largeRequestsPerProject,
    max: config.largeRequestsMax,
  });
  const deps = { config, db, logger, dataDir: opts.inMemory ? undefined : config.dataDir, large };
  const auth = await authFeature(deps, adminPasswordHash);
  const bots = botsFeature(deps);
  const terminology = terminologyFeature(deps);
  const fhir = fhirFeature();
  // Started in this order (auth first: bot jobs look up sessions), closed in reverse.
  const features: Feature[] = [auth, bots, terminology, fhir];
  // Routes in the order requests look for them: $expand first (the hottest), the generic resource routes last.
  const routeOrder: Feature[] = [terminology, bots, auth, fhir];
  const registry = new ResourceRegistry(large);
  for (const f of features)
    for (const [type, store] of Object.entries(f.stores ?? {})) registry.register(type, store);
  const services: Services = {
    config,
    db,
    logger,
    auth: auth.service,
    fhir: registry,
    bots: bots.service,
    jobs: bots.jobs,
    terminology: terminology.service,
    operations: executor,
    instanceId: crypto.randomUUID(),
  };
  for (const f of features) await f.start?.(services);
  let draining = false;
  const api = httpApi(services, features, {
    logs: logDestination,
    draining: () => draining,
  });

  const eventLoop = startEventLoopWatchdog(logger, config.eventLoopLogIntervalMs);
  createExpressApp(
    api,
    routeOrder.flatMap((f) => (f.routes ? [f.routes] : [])),
    eventLoop,
    app,
  );
  server.keepAliveTimeout = 65_000;
  limitConnectionsPerAddress(server, config.maxConnectionsPerAddress);
  const closeInFlight = closeConnectionsWhenDraining(server, () => draining);
  await listen();
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}/`;
  let closing: Promise<void> | undefined;
  return {
    services,
    server,
    url,
    close() {
      closing ??= (async () => {
        // Stop accepting; keep-alive connections close after their current request; in-flight requests get
        // the grace to finish.
        draining = true;
        closeInFlight();
        const started = performance.now();
        await drain(server, config.shutdownGraceMs);
        const drained = performance.now();
        eventLoop.stop();
        for (const f of [...features].reverse()) await f.close?.();
        const featuresClosed = performance.now();
        await db.close();
        // Where a slow shutdown spent its time (the requests' grace, the bots and caches, the database).
        logger.info(
          {
            drainMs: Math.round(drained - started),
            featuresMs: Math.round(featuresClosed - drained),
            databaseMs: Math.round(performance.now() - featuresClosed),
          },
          'closed',
        );
      })();
      return closing;
    },
  };
}

/** Readiness: not while draining, nor while the database does not answer a (cached) `SELECT 1`. */
function readinessOf(db: Database, draining: () => boolean): Pick<HttpApi, 'readiness' | 'readinessNow'> {
  const probe = probeDatabase(db);
  const of = (reachable: boolean): Readiness =>
    draining()
      ? { ready: false, reason: 'draining' }
      : reachable
        ? { ready: true }
        : { ready: false, reason: 'database unreachable' };
  return {
    readiness() {
      const known = probe.cached();
      return known === undefined ? probe.check().then(of) : of(known);
    },
    // Before the first probe has answered: the server has just opened the database, so it answered then.
    readinessNow: () => of(probe.latest() ?? true),
  };
}

/** The application as the HTTP layer sees it. */
function httpApi(
  services: Services,
  features: Feature[],
  extra: { logs?: LogDestination; draining: () => boolean },
): HttpApi {
  const { auth, db, fhir } = services;
  return {
    config: services.config,
    logger: services.logger,
    authenticateCached: (token) => auth.requests.authenticateCached(token),
    authenticate: (token) => auth.requests.authenticate(token),
    context: (principal, request) => createContext(services, principal, request),
    health() {
      const fsync = db.syncStats;
      return {
        database: db.kind,
        ...(fsync ? { fsync: { ...fsync, totalMs: Math.round(fsync.totalMs) } } : {}),
        ...(extra.logs ? { logs: { dropped: extra.logs.dropped } } : {}),
      };
    },
    ...readinessOf(db, extra.draining),
    resourceTypes: () => fhir.types(),
    operations: features.flatMap((f) => f.operations ?? []),
    capabilities: {
      instantiates: features.flatMap((f) => f.capabilities?.instantiates ?? []),
      extension: features.flatMap((f) => f.capabilities?.extension ?? []),
    },
    publicJwk: auth.keys.publicJwk,
    large: fhir.large,
  };
}
