// `npm run project:create -- --name <name> --admin-email <email> [--first-name ..] [--last-name ..]`: creates a
// project, its first admin (a new account) and its first client application (id and secret printed once) on the
// database the server uses (DATABASE_URL, or the embedded one in DATA_DIR: stop the server first, PGlite opens a
// directory from one process). The password comes from the PROJECT_ADMIN_PASSWORD environment variable or the
// first line of stdin, never from the command line (which other users of the machine can read in the process list,
// and shells keep in their history).
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { ApiError } from '../core/errors.js';
import { passwordHasher } from './passwords.js';
import { createProject } from './projects.js';

function usage(): never {
  process.stderr.write(
    'Usage: PROJECT_ADMIN_PASSWORD=... npm run project:create -- --name <name> --admin-email <email>\n' +
      '         [--first-name <name>] [--last-name <name>]\n' +
      '  Without PROJECT_ADMIN_PASSWORD the password is read from the first line of stdin.\n',
  );
  process.exit(2);
}

/** The first line of stdin (the password when it is not in the environment). */
async function readLine(): Promise<string> {
  let data = '';
  for await (const chunk of process.stdin) {
    data += String(chunk);
    const nl = data.indexOf('\n');
    if (nl >= 0) return data.slice(0, nl).replace(/\r$/, '');
  }
  return data;
}

/** Parses argv, creates the project, prints its id, the admin's id and the client's id and secret; exits non-zero
 * on failure. */
async function main(argv: string[]): Promise<void> {
  const opts: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i];
    if (!['--name', '--admin-email', '--first-name', '--last-name'].includes(key)) usage();
    const value = argv[++i];
    if (value === undefined) usage();
    opts[key.slice(2)] = value;
  }
  if (!opts.name || !opts['admin-email']) usage();
  const password = process.env.PROJECT_ADMIN_PASSWORD ?? (await readLine());

  const config = loadConfig(process.env);
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    dataDir: config.dataDir,
  });
  try {
    const created = await createProject(db, passwordHasher(config), 'cli', {
      name: opts.name,
      adminEmail: opts['admin-email'],
      adminPassword: password,
      adminFirstName: opts['first-name'],
      adminLastName: opts['last-name'],
    });
    // The secret is printed this once (only its hash is kept): the operator hands it to the project's admins.
    process.stdout.write(
      `created project ${created.projectId} with admin user ${created.adminUserId}\n` +
        `client application ${created.clientId}, secret (shown once, store it now): ${created.clientSecret}\n`,
    );
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const field = err instanceof ApiError ? err.expression : undefined;
  process.stderr.write(
    `project:create failed: ${err instanceof Error ? err.message : String(err)}${field ? ` (${field.join(', ')})` : ''}\n`,
  );
  process.exit(1);
});
