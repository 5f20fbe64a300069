// First start on an empty database: a project, its admin user and a confidential client application.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { passwordHasher, sha256 } from './passwords.js';
import { isUuid } from './uuid.js';

/** Starts hashing the admin's password ahead of bootstrap (scrypt runs on the thread pool, ~0.3 s): on a first start
 * it then overlaps with opening the database. */
export function prehashAdminPassword(config: Config): Promise<string> {
  const hashed = passwordHasher(config).hash(config.adminPassword);
  // Awaited by bootstrap, which reports a failure; never left unhandled meanwhile.
  hashed.catch(() => {});
  return hashed;
}

/** Creates the first project, admin and client when no project exists yet. Returns the project id when created.
 * `prehashed`: the admin's password hash from prehashAdminPassword, when the caller knew the database was new. */
export async function bootstrap(
  db: Database,
  config: Config,
  logger: Logger,
  prehashed?: Promise<string>,
): Promise<string | undefined> {
  if (!isUuid(config.clientId)) throw new Error(`CLIENT_ID must be a UUID, got "${config.clientId}"`);
  const email = config.adminEmail.trim().toLowerCase();
  // Most starts find a project: skip the (deliberately slow) hash then.
  if ((await db.sql('SELECT 1 FROM "Project" LIMIT 1')).length > 0) return undefined;
  const passwordHash = await (prehashed ?? passwordHasher(config).hash(config.adminPassword));
  const created = await db.transaction(async (sql) => {
    if (db.kind === 'postgres') await sql('SELECT pg_advisory_xact_lock(81030002)');
    const any = await sql('SELECT 1 FROM "Project" LIMIT 1');
    if (any.length > 0) return undefined;
    const [project] = await sql<{ id: string }>(
      `INSERT INTO "Project" (id, name) VALUES (gen_random_uuid(), 'Default Project') RETURNING id`,
    );
    const [user] = await sql<{ id: string }>(
      `INSERT INTO "User" (id, email, "passwordHash", "firstName", "lastName", "serverAdmin") VALUES (gen_random_uuid(), $1, $2, 'Admin', 'User', true) RETURNING id`,
      [email, passwordHash],
    );
    await sql(
      `INSERT INTO "ProjectMembership" (id, "projectId", "userId", admin) VALUES (gen_random_uuid(), $1, $2, true)`,
      [project.id, user.id],
    );
    await sql(
      `INSERT INTO "ClientApplication" (id, "projectId", name, "secretHash") VALUES ($1, $2, 'Default Client', $3)`,
      [config.clientId, project.id, sha256(config.clientSecret)],
    );
    await sql(
      `INSERT INTO "ProjectMembership" (id, "projectId", "clientId", admin) VALUES (gen_random_uuid(), $1, $2, true)`,
      [project.id, config.clientId],
    );
    return project.id;
  });
  if (created) {
    const d = config.defaulted;
    // Printed once, only for values the operator did not set, so they can sign in; never logged elsewhere.
    const lines = [
      d.adminEmail ? `  ADMIN_EMAIL=${config.adminEmail}` : undefined,
      d.adminPassword ? `  ADMIN_PASSWORD=${config.adminPassword}` : undefined,
      d.clientId ? `  CLIENT_ID=${config.clientId}` : undefined,
      d.clientSecret ? `  CLIENT_SECRET=${config.clientSecret}` : undefined,
    ].filter(Boolean);
    logger.info({ projectId: created }, 'created the first project, admin user and client application');
    if (lines.length > 0) {
      process.stdout.write(
        `\nFirst start: created with default settings (change them for production):\n${lines.join('\n')}\n\n`,
      );
    }
  }
  return created;
}
