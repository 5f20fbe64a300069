// The auth feature: accounts, sign-in, tokens and sessions; /auth, /oauth2 and /.well-known. On an empty database
// it first creates the first project, admin user and client application.
import { bootstrap } from './bootstrap.js';
export { prehashAdminPassword } from './bootstrap.js';
import { loadSigningKeys } from './keys.js';
import { AuthService } from './service.js';
import { authRoutes } from './routes.js';
import type { Feature, FeatureDeps } from '../rest/feature.js';

/** The auth feature, with its service. `adminPasswordHash`: begun by prehashAdminPassword on a new database. */
export async function authFeature(
  { config, db, logger }: FeatureDeps,
  adminPasswordHash?: Promise<string>,
): Promise<Feature & { service: AuthService }> {
  await bootstrap(db, config, logger, adminPasswordHash);
  const service = new AuthService(db, config, await loadSigningKeys(db, config.signingKeyPem), logger);
  return {
    service,
    routes: authRoutes,
    start: () => service.start(),
    close: () => service.close(),
  };
}
