// HTTP Basic client authentication (RFC 6749 2.3.1), shared by the token and introspection endpoints.

/** Client credentials from an HTTP Basic Authorization header (RFC 6749 2.3.1: form-encoded id and secret). */
export function parseBasic(
  header: string | string[] | undefined,
): { clientId: string; clientSecret: string } | undefined {
  if (typeof header !== 'string' || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return {
      clientId: decodeURIComponent(decoded.slice(0, colon)),
      clientSecret: decodeURIComponent(decoded.slice(colon + 1)),
    };
  } catch {
    return undefined;
  }
}
