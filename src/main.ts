// Process entry: config -> database -> app -> listen; graceful shutdown on SIGTERM/SIGINT.
import { nodeEnvDefaulted } from './production-env.js';
import { preloadPGlite } from './db/pglite-preload.js';
import { applyHeapSettings } from './heap-settings.js';

// Before anything large loads: what the start allocates must not size the heap for the rest of the run, nor a
// burst of requests the old generation (src/heap-settings.ts).
const startDone = applyHeapSettings();
// On the embedded database, PGlite's WebAssembly is read and compiled while the server's modules load.
if (!process.env.DATABASE_URL) preloadPGlite();
const { ConfigError } = await import('./config.js');
const { startServer } = await import('./server.js');
const { killSelfAfter } = await import('./last-resort-exit.js');

const running = await startServer({ env: process.env, productionDefaulted: nodeEnvDefaulted }).catch(
  (err: unknown) => {
    // A bad setting is the operator's to fix: its message names it; a stack trace would only bury it.
    if (err instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  },
);
startDone();
const { logger, config } = running.services;
logger.info({ url: config.baseUrl, database: running.services.db.kind }, `listening on port ${config.port}`);

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down: finishing in-flight requests');
  // Requests get the grace; closing the bots and the database a few seconds more. If even process.exit blocks
  // (an isolate thread stuck in its out-of-memory callback), the watchdog process ends this one.
  const forceMs = config.shutdownGraceMs + 5_000;
  killSelfAfter(forceMs + 5_000);
  const force = setTimeout(() => {
    logger.warn('shutdown took too long; exiting');
    process.exit(1);
  }, forceMs);
  force.unref();
  running.close().then(
    () => {
      logger.info('stopped');
      process.exit(0);
    },
    (err: unknown) => {
      logger.error({ err }, 'error during shutdown');
      process.exit(1);
    },
  );
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
