// CORS for the REST paths a browser app calls across origins (/fhir, /auth, /oauth2 - the token endpoint, userinfo,
// logout - after signing in through /oauth2/authorize): only the origins in CORS_ORIGINS get an
// Access-Control-Allow-Origin, with credentials (MedplumClient's token request sends `credentials: 'include'`); any
// other origin gets no CORS headers, so the browser keeps the answer from its page. /graphql has its own (yoga's).
// The sign-in page itself is a navigation, not a fetch: CORS does not concern it.
import type { Request, Response } from 'express';

/** Headers a page may read from an answer (beyond the CORS-safelisted ones). */
const EXPOSED =
  'Location, Content-Location, ETag, Last-Modified, Retry-After, WWW-Authenticate, X-Request-Id';
/** Most request headers a preflight may ask for (names only; longer lists are cut, and the browser refuses). */
const MAX_REQUESTED_HEADERS = 1000;

/** Whether the path is one the REST CORS answers apply to. */
function corsPath(path: string): boolean {
  return path.startsWith('/fhir/') || path.startsWith('/auth/') || path.startsWith('/oauth2/');
}

/** Sets the CORS headers for an allowed origin; answers a preflight (204) and returns true when it did. */
export function applyCors(req: Request, res: Response, origins: readonly string[]): boolean {
  if (origins.length === 0 || !corsPath(req.path)) return false;
  res.append('Vary', 'Origin');
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || !origins.includes(origin)) return false;
  res.setHeader('Access-Control-Allow-Origin', origin);
  res.setHeader('Access-Control-Allow-Credentials', 'true');
  const requested = req.headers['access-control-request-method'];
  if (req.method !== 'OPTIONS' || typeof requested !== 'string') {
    res.setHeader('Access-Control-Expose-Headers', EXPOSED);
    return false;
  }
  res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, POST, PUT, PATCH, DELETE');
  const headers = req.headers['access-control-request-headers'];
  // The origin is trusted (allow-listed): the headers it asks for are allowed, as far as they are header names.
  if (typeof headers === 'string' && /^[\w\-, ]*$/.test(headers))
    res.setHeader('Access-Control-Allow-Headers', headers.slice(0, MAX_REQUESTED_HEADERS));
  res.setHeader('Access-Control-Max-Age', '600');
  res.status(204).end();
  return true;
}
