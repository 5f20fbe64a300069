// What the REST layer attaches to each Express request, and the GraphQL context built from it.
import type { Request } from 'express';
import type { Principal, RequestFacts } from '../core/caller.js';
import type { GraphQLContext } from '../graphql/context.js';
import type { HttpApi } from './api.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express request augmentation is declared this way
  namespace Express {
    interface Request {
      /** Set by the authentication middleware when a valid Bearer token was sent. */
      principal?: Principal | null;
      /** The bearer token that authenticated this request. */
      token?: string;
      /** A JSON body's bytes as received (small bodies, parsed in one go; see json-body.ts). */
      rawBody?: Buffer;
      /** The application, as the HTTP layer sees it (set once per request). */
      api: HttpApi;
    }
  }
}

/** The GraphQL context for a request (REST handlers and the /graphql endpoint alike). */
export function contextFor(req: Request): GraphQLContext {
  return req.api.context(req.principal ?? null, new ExpressRequestFacts(req));
}

/** Request facts for the context. Address and User-Agent are read on first use: only sign-in needs them, and
 * Express's req.ip parses forwarding headers on every call. A class: an object literal with getters is built
 * the slow way by V8, on every request. */
class ExpressRequestFacts implements RequestFacts {
  readonly requestId: string;
  readonly headers: Request['headers'];
  readonly token: string | undefined;
  constructor(private readonly req: Request) {
    this.requestId = req.id;
    this.headers = req.headers;
    this.token = req.token;
  }
  get remoteAddress(): string | undefined {
    return this.req.ip ?? this.req.socket.remoteAddress;
  }
  get userAgent(): string | undefined {
    return this.req.get('user-agent');
  }
}
