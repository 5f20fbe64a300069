// `npm run user:reset-link -- --email <email>`: a server administrator issues a one-time password reset link for an
// account (where no SMTP server is configured to email one), on the database the server uses (DATABASE_URL, or the
// embedded one in DATA_DIR: stop the server first, PGlite opens a directory from one process). The link is printed
// once, for the administrator to hand over; it is never logged. The account's projects' audit logs record that a
// link was issued from the CLI (never the link).
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { recordAccountAudit } from './audit.js';
import { normalizeEmail } from './email.js';
import { issueResetLink } from './password-reset.js';

function usage(): never {
  process.stderr.write('Usage: npm run user:reset-link -- --email <email>\n');
  process.exit(2);
}

/** Parses argv, issues the link, prints it; exits non-zero when the address has no account. */
async function main(argv: string[]): Promise<void> {
  if (argv.length !== 2 || argv[0] !== '--email') usage();
  const email = normalizeEmail(argv[1]);
  if (!email) {
    process.stderr.write(`user:reset-link failed: "${argv[1].slice(0, 100)}" is not an email address\n`);
    process.exit(1);
  }
  const config = loadConfig(process.env);
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    dataDir: config.dataDir,
  });
  try {
    const user = await db.prisma.user.findUnique({ where: { email }, select: { id: true } });
    if (!user) {
      process.stderr.write(`user:reset-link failed: no account has the address ${email}\n`);
      process.exitCode = 1;
      return;
    }
    const link = await issueResetLink(db, config, user.id, (sql) =>
      recordAccountAudit(sql, user.id, {
        action: 'password.reset.request',
        actor: {},
        target: { type: 'user', id: user.id },
        detail: { via: 'cli' },
      }),
    );
    process.stdout.write(
      `password reset link for ${email} (works once, until ${link.expiresAt.toISOString()}):\n${link.url}\n`,
    );
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`user:reset-link failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
