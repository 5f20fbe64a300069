// Security headers (helmet's defaults: a strict Content-Security-Policy, nosniff, frame-ancestors 'self', HSTS,
// no referrer, cross-origin isolation headers) on every answer, FHIR REST, /auth, /oauth2 and /healthz included.
// /graphql sets its own (GraphiQL needs a looser policy for its page). The headers do not depend on the request, so
// helmet runs once here and each request only copies the list: helmet per request walks a dozen middlewares.
import helmet from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** helmet's default headers as name/value pairs, computed once. */
function helmetDefaults(): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  const res = {
    setHeader(name: string, value: unknown) {
      headers.push([name, String(value)]);
      return res;
    },
    removeHeader() {
      return res;
    },
  };
  // helmet's middleware is synchronous; it only calls setHeader/removeHeader and next.
  helmet()({} as IncomingMessage, res as unknown as ServerResponse, () => undefined);
  return headers;
}

const HEADERS = helmetDefaults();

/** Sets the security headers on a response. */
export function setSecurityHeaders(res: ServerResponse): void {
  for (const [name, value] of HEADERS) res.setHeader(name, value);
}
