// Process entry: config -> database -> app -> listen; graceful shutdown on SIGTERM/SIGINT.
import './production-env.js';
import { startServer } from './server.js';

const running = await startServer();
const { logger, config } = running.services;
logger.info({ url: config.baseUrl, database: running.services.db.kind }, `listening on port ${config.port}`);

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down: finishing in-flight requests');
  const force = setTimeout(() => {
    logger.warn('shutdown took too long; exiting');
    process.exit(1);
  }, 20_000);
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
