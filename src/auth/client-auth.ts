// Client application authentication (RFC 6749 2.3.1): id and secret checked in constant time, against the current
// secret and, for CLIENT_SECRET_ROTATION_GRACE after a rotation, the previous one; failures throttled per client and
// address. A public client (RFC 6749 2.1) has no secret: it names itself with client_id alone where a client is
// named (authorization_code, refresh_token) and cannot authenticate (client_credentials, introspection). Used by the
// token grants and by introspection. A failed authentication of an existing client is audited in its project
// (`signin.failed`); one of an id that names no client is logged only.
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { OAuthError } from '../core/oauth-error.js';
import { recordAudit } from './audit.js';
import type { AuditLog } from './audit-log.js';
import { safeEqual, sha256 } from './passwords.js';
import { CheckThrottle } from './throttle.js';
import { isUuid } from './uuid.js';

/** Client credentials a token request carries (form body or HTTP Basic). */
export interface ClientCredentials {
  clientId?: string;
  clientSecret?: string;
  /** Where the request came from (throttling of failed checks). */
  remoteAddress?: string;
}

/** A client application as the token endpoint sees it. */
export interface ClientRow {
  id: string;
  projectId: string;
  public: boolean;
  secretHash: string | null;
  previousSecretHash: string | null;
  previousSecretExpiresAt: Date | null;
  redirectUris: string[];
}

/** Compared against when there is no hash to compare with, so timing does not tell which ids exist. */
const NO_HASH = sha256('');

/** True when `secret` is the client's current secret, or its previous one within the grace; constant time. */
function secretMatches(app: ClientRow | null, secret: string | undefined): boolean {
  const h = sha256(secret ?? '');
  const current = safeEqual(h, app?.secretHash ?? NO_HASH);
  const graceOpen = (app?.previousSecretExpiresAt?.getTime() ?? 0) > Date.now();
  const previous = safeEqual(h, (graceOpen && app?.previousSecretHash) || NO_HASH);
  // Both comparisons always run; an empty secret never matches (NO_HASH is its hash).
  return secret !== undefined && secret !== '' && (current || previous);
}

/** The answer to a public client that tries to authenticate (client_credentials, introspection). */
export function publicClientRefused(): OAuthError {
  return new OAuthError(
    'unauthorized_client',
    'This client is public: it has no secret, cannot use client_credentials, and signs users in with ' +
      'authorization_code and PKCE (client_id alone)',
  );
}

/** Checks client applications' credentials. */
export class ClientAuthenticator {
  private throttle: CheckThrottle;

  constructor(
    private readonly db: Database,
    config: Config,
    private readonly audit: AuditLog,
  ) {
    this.throttle = new CheckThrottle('client authentication', config.clientAuthThrottle);
  }

  /** The client application with this id, or null (also for an id that is not a UUID). */
  async find(clientId: string | undefined): Promise<ClientRow | null> {
    if (!isUuid(clientId)) return null;
    return this.db.prisma.clientApplication.findUnique({
      where: { id: clientId },
      select: {
        id: true,
        projectId: true,
        public: true,
        secretHash: true,
        previousSecretHash: true,
        previousSecretExpiresAt: true,
        redirectUris: true,
      },
    });
  }

  /** Checks a confidential client's id and secret (constant time); throws invalid_client otherwise, and
   * unauthorized_client for a public client (it has no secret to authenticate with). */
  async authenticate(
    clientId: string | undefined,
    clientSecret: string | undefined,
    address?: string,
  ): Promise<ClientRow> {
    const subject = (clientId ?? '').slice(0, 64);
    this.throttle.check(subject, address);
    const app = await this.find(clientId);
    if (app?.public) throw publicClientRefused();
    if (!app || !secretMatches(app, clientSecret)) {
      this.throttle.fail(subject, address);
      const failed = {
        action: 'signin.failed',
        outcome: 'failure',
        actor: { clientId: app?.id, remoteAddress: address },
        detail: { reason: 'wrong client secret' },
      } as const;
      if (app) await recordAudit(this.db.sql, app.projectId, failed);
      else this.audit.unrecorded({ ...failed, detail: { reason: 'unknown client' } }, { clientId: subject });
      throw new OAuthError('invalid_client', 'Invalid client credentials');
    }
    this.throttle.succeed(subject, address);
    await this.touch(app.id);
    return app;
  }

  /** The client a token request names, checked; undefined when it names none (empty client_id, as MedplumClient
   * sends without a client). A confidential client must authenticate (RFC 6749 3.2.1); a public one names itself
   * with client_id alone. */
  async requesting(client: ClientCredentials): Promise<string | undefined> {
    if (!client.clientId && !client.clientSecret) return undefined;
    if (!client.clientId) throw new OAuthError('invalid_client', 'client_secret was given without client_id');
    if (client.clientSecret)
      return (await this.authenticate(client.clientId, client.clientSecret, client.remoteAddress)).id;
    this.throttle.check(client.clientId.slice(0, 64), client.remoteAddress);
    const app = await this.find(client.clientId);
    if (!app?.public)
      throw new OAuthError(
        'invalid_client',
        'Client authentication is required: send client_secret (form or HTTP Basic) with client_id',
      );
    await this.touch(app.id);
    return app.id;
  }

  /** Records that a token request used the client (listed to its project's admins as lastUsed). */
  private async touch(id: string): Promise<void> {
    await this.db.prisma.clientApplication.updateMany({ where: { id }, data: { lastUsed: new Date() } });
  }
}
