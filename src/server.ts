// Composition root: opens the database, builds the services and the HTTP server. Used by main.ts and the tests.
import path from 'node:path';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pino, { type Logger } from 'pino';
import { loadConfig, type Config, type Env } from './config.js';
import { openDatabase } from './db/database.js';
import { AuthService } from './auth/auth-service.js';
import { loadSigningKeys } from './auth/keys.js';
import { bootstrap } from './auth/bootstrap.js';
import { ResourceRegistry } from './fhir/registry.js';
import { createExpressApp, type FeatureRoutes } from './rest/app.js';
import { createHttpServer } from './rest/http-server.js';
import { limitConnectionsPerAddress } from './rest/connection-limit.js';
import { closeConnectionsWhenDraining, drain } from './rest/drain.js';
import { startEventLoopWatchdog } from './rest/event-loop.js';
import type { Services } from './services.js';
import { BotService } from './bots/service.js';
import { botRoutes } from './rest/bot-routes.js';
import { expandLimitsOf, TerminologyService } from './terminology/service.js';
import { setupTerminology } from './terminology/setup.js';
import { terminologyRoutes } from './rest/terminology-routes.js';
import { runOperation } from './rest/operation.js';
import { schema } from './graphql/schema.js';

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
  const logger =
    opts.logger ??
    pino({
      level: config.logLevel,
      redact: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.token'],
    });
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    dataDir: opts.inMemory ? undefined : config.dataDir,
    pgliteSocketPort: config.pgliteSocketPort,
    fsync: config.pgliteFsync,
    logger,
  });
  await bootstrap(db, config, logger);
  const keys = await loadSigningKeys(db, config.signingKeyPem);
  const auth = new AuthService(db, config, keys, logger);
  await auth.start();
  const services: Services = {
    config,
    db,
    logger,
    auth,
    fhir: new ResourceRegistry({ perProject: config.largeRequestsPerProject, max: config.largeRequestsMax }),
    bots: new BotService(db, config, logger),
    terminology: new TerminologyService(db, logger, expandLimitsOf(config), {
      // Index files beside the data (read back after a restart); tests on an in-memory database keep none.
      indexDir: opts.inMemory ? undefined : path.join(config.dataDir, 'terminology-index'),
      indexBudgetBytes: config.terminologyIndexBudgetMb * 1024 * 1024,
    }),
    operations: { run: runOperation, schema },
    instanceId: crypto.randomUUID(),
  };
  services.fhir.register('Bot', services.bots.store);
  await services.bots.start(services, { runJobs: config.botJobRunner });
  await setupTerminology(services);
  // $expand first: it is the hottest FHIR route.
  const features: FeatureRoutes[] = [terminologyRoutes, botRoutes];

  const eventLoop = startEventLoopWatchdog(logger, config.eventLoopLogIntervalMs);
  createExpressApp(services, features, eventLoop, app);
  server.keepAliveTimeout = 65_000;
  limitConnectionsPerAddress(server, config.maxConnectionsPerAddress);
  let draining = false;
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
        await drain(server, config.shutdownGraceMs);
        eventLoop.stop();
        await services.bots.close();
        await services.terminology.close();
        await auth.close();
        await db.close();
      })();
      return closing;
    },
  };
}
