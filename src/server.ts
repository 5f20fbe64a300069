// Composition root: opens the database, builds the services and the HTTP server. Used by main.ts and the tests.
import path from 'node:path';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import { loadConfig, type Config } from './config.js';
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

export interface RunningServer {
  services: Services;
  server: http.Server;
  url: string;
  close(): Promise<void>;
}

export interface StartOptions {
  config?: Partial<Config>;
  logger?: Logger;
  /** In-memory PGlite (tests); otherwise PGlite in config.dataDir or PostgreSQL. */
  inMemory?: boolean;
}

/** Starts a server: database, migrations, first-start bootstrap, services, HTTP listener. */
export async function startServer(opts: StartOptions = {}): Promise<RunningServer> {
  const config = loadConfig(opts.config);
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
    fhir: new ResourceRegistry(),
    bots: new BotService(db, config, logger),
    terminology: new TerminologyService(db, logger, expandLimitsOf(config), {
      // Index files beside the data (read back after a restart); tests on an in-memory database keep none.
      indexDir: opts.inMemory ? undefined : path.join(config.dataDir, 'terminology-index'),
      indexBudgetBytes: config.terminologyIndexBudgetMb * 1024 * 1024,
    }),
    instanceId: crypto.randomUUID(),
  };
  services.fhir.register('Bot', services.bots.store);
  await services.bots.start(services, { runJobs: config.botJobRunner });
  await setupTerminology(services);
  // $expand first: it is the hottest FHIR route.
  const features: FeatureRoutes[] = [terminologyRoutes, botRoutes];

  const eventLoop = startEventLoopWatchdog(logger, config.eventLoopLogIntervalMs);
  const app = createExpressApp(services, features, eventLoop);
  const server = createHttpServer(app, config);
  server.keepAliveTimeout = 65_000;
  limitConnectionsPerAddress(server, config.maxConnectionsPerAddress);
  let draining = false;
  const closeInFlight = closeConnectionsWhenDraining(server, () => draining);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  if (!opts.config?.baseUrl && !process.env.BASE_URL) config.baseUrl = `http://localhost:${port}/`;
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
        await auth.close();
        await db.close();
      })();
      return closing;
    },
  };
}
