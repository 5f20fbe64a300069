// Client application authentication (RFC 6749 2.3.1): id and secret checked in constant time, failures
// throttled per client and address. Used by the token grants and by introspection.
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { OAuthError } from '../core/oauth-error.js';
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

/** Checks client applications' credentials. */
export class ClientAuthenticator {
  private throttle: CheckThrottle;

  constructor(
    private readonly db: Database,
    config: Config,
  ) {
    this.throttle = new CheckThrottle('client authentication', config.clientAuthThrottle);
  }

  /** Checks a client application's id and secret (constant time); throws invalid_client otherwise. */
  async authenticate(
    clientId: string | undefined,
    clientSecret: string | undefined,
    address?: string,
  ): Promise<string> {
    const subject = (clientId ?? '').slice(0, 64);
    this.throttle.check(subject, address);
    const app =
      clientId && isUuid(clientId)
        ? await this.db.prisma.clientApplication.findUnique({ where: { id: clientId } })
        : null;
    // Compare even when the client is unknown, so timing does not tell which ids exist.
    const matches = safeEqual(sha256(clientSecret ?? ''), app?.secretHash ?? sha256(''));
    if (!app || !clientSecret || !matches) {
      this.throttle.fail(subject, address);
      throw new OAuthError('invalid_client', 'Invalid client credentials');
    }
    this.throttle.succeed(subject, address);
    return app.id;
  }

  /** The client a token request names, authenticated; undefined when it names none (empty client_id, as
   * MedplumClient sends without a client). Every client application holds a secret, so every named client is
   * confidential and must authenticate (RFC 6749 3.2.1). */
  async requesting(client: ClientCredentials): Promise<string | undefined> {
    if (!client.clientId && !client.clientSecret) return undefined;
    if (!client.clientId) throw new OAuthError('invalid_client', 'client_secret was given without client_id');
    if (!client.clientSecret)
      throw new OAuthError(
        'invalid_client',
        'Client authentication is required: send client_secret (form or HTTP Basic) with client_id',
      );
    return this.authenticate(client.clientId, client.clientSecret, client.remoteAddress);
  }
}
