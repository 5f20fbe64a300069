// The bots feature: the Bot resource, $execute/$deploy, asynchronous jobs, project secrets. Jobs run as their
// caller: the runner gets the caller's session from auth and runs the bot with a GraphQL context of its own.
import { BotService } from './service.js';
import { JobRunner } from './jobs.js';
import { executionHost } from './graphql-medplum.js';
import { createContext } from '../graphql/context.js';
import { BOT_OPERATIONS, botRoutes } from './routes.js';
import type { Feature, FeatureDeps } from '../rest/feature.js';

/** The bots feature, with its services. */
export function botsFeature({
  config,
  db,
  logger,
  large,
}: FeatureDeps): Feature & { service: BotService; jobs: JobRunner } {
  const service = new BotService(db, config, logger, large);
  const jobs = new JobRunner(db, logger, config.botJobsQueuedPerProject);
  return {
    service,
    jobs,
    stores: { Bot: service.store },
    operations: BOT_OPERATIONS,
    routes: botRoutes,
    async start(services) {
      await service.start();
      if (!config.botJobRunner) return;
      await jobs.start({
        session: (loginId) => services.auth.cache.get(loginId),
        execute: (caller, request, traceId) =>
          service.execute(
            caller,
            request,
            executionHost(createContext(services, caller, caller.request)),
            traceId,
          ),
      });
    },
    async close() {
      await jobs.close();
      await service.close();
    },
  };
}
