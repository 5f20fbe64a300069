// The auth parts of one server instance, built together because they share the session cache, the token signer
// and the password hasher; started and closed together. Each part is its own file: request authentication,
// password sign-in and its second factor, the token grants, client authentication, session administration, token
// introspection and revocation, accounts, members and client applications, and the audit log they write.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { Accounts } from './accounts.js';
import { AuditLog } from './audit-log.js';
import { Authorizations } from './authorize.js';
import { PasswordChange } from './password-change.js';
import { PasswordResets } from './password-reset.js';
import { defaultSender, smtpMailer } from './mailer.js';
import { ClientApplications } from './client-apps.js';
import { ClientAuthenticator } from './client-auth.js';
import { TokenGrants } from './grants.js';
import type { SigningKeys } from './keys.js';
import { passwordHasher, type PasswordHasher } from './passwords.js';
import { RequestAuthenticator } from './request-auth.js';
import { SessionAdmin } from './session-admin.js';
import { SessionCache } from './session-cache.js';
import { PasswordSignIn } from './sign-in.js';
import { TokenIntrospection } from './token-introspection.js';
import { Members } from './members.js';
import { SecondFactor } from './mfa.js';
import { MfaSignIn } from './mfa-sign-in.js';
import { TokenService } from './tokens.js';

/** Accounts, sign-in, tokens and sessions of one server instance. Nothing here knows HTTP. */
export class AuthService {
  readonly tokens: TokenService;
  /** Login states, kept fresh across instances. */
  readonly cache: SessionCache;
  readonly passwords: PasswordHasher;
  readonly requests: RequestAuthenticator;
  readonly signIn: PasswordSignIn;
  readonly clients: ClientAuthenticator;
  readonly sessions: SessionAdmin;
  readonly grants: TokenGrants;
  readonly introspection: TokenIntrospection;
  /** A project's members and invitations, as its admins manage them. */
  readonly members: Members;
  /** A project's client applications, as its admins manage them. */
  readonly clientApps: ClientApplications;
  readonly accounts: Accounts;
  /** A signed-in user's password change. */
  readonly passwordChange: PasswordChange;
  /** Password reset links. */
  readonly passwordResets: PasswordResets;
  /** Users' second factors (TOTP) and the project setting that requires one. */
  readonly mfa: SecondFactor;
  /** The second-factor steps of sign-in. */
  readonly mfaSignIn: MfaSignIn;
  /** The audit log: its reading, and its retention. */
  readonly audit: AuditLog;
  /** Authorization requests of /oauth2/authorize, checked against the registered clients. */
  readonly authorize: Authorizations;

  constructor(
    db: Database,
    config: Config,
    readonly keys: SigningKeys,
    logger: Logger,
  ) {
    this.tokens = new TokenService(keys, () => config.baseUrl);
    this.audit = new AuditLog(db, logger, config.auditRetentionDays);
    this.cache = new SessionCache(db, logger);
    this.passwords = passwordHasher(config);
    this.requests = new RequestAuthenticator(db, this.tokens, this.cache, logger);
    this.clients = new ClientAuthenticator(db, config, this.audit);
    this.sessions = new SessionAdmin(db, this.cache);
    this.mfa = new SecondFactor(db, config, this.passwords, this.sessions, this.audit);
    this.mfaSignIn = new MfaSignIn(db, config, this.mfa, this.audit);
    this.signIn = new PasswordSignIn(db, config, this.passwords, this.mfaSignIn, this.audit);
    this.grants = new TokenGrants(db, config, this.tokens, this.cache, this.sessions, this.clients);
    this.introspection = new TokenIntrospection(db, this.tokens, this.cache, this.sessions);
    this.accounts = new Accounts(db, config, this.passwords);
    this.members = new Members(db, this.sessions);
    this.passwordChange = new PasswordChange(db, config, this.passwords, this.sessions, this.audit);
    const mailer = config.smtpUrl
      ? smtpMailer(config.smtpUrl, config.smtpFrom ?? defaultSender(config.baseUrl))
      : undefined;
    this.passwordResets = new PasswordResets(
      db,
      config,
      this.passwords,
      this.sessions,
      logger,
      this.audit,
      mailer,
    );
    this.clientApps = new ClientApplications(db, this.sessions, config.clientSecretRotationGraceSec);
    this.authorize = new Authorizations(db, config.pkceAllowPlain);
  }

  /** Subscribes the session cache to its channels. */
  async start(): Promise<void> {
    await this.cache.start();
    this.audit.start();
  }

  /** Leaves the peers, then writes the pending lastUsed times. */
  async close(): Promise<void> {
    await this.cache.stop();
    await this.requests.close();
    await this.audit.close();
  }
}
