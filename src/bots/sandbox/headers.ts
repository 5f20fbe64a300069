// HTTP header checks for what crosses the boundary: a bot's fetch request headers and its BotResponse headers.

/** Response headers a bot may not set (hop-by-hop, framing, cookies on the server origin, CORS). */
export const FORBIDDEN_RESPONSE_HEADERS =
  /^(connection|keep-alive|transfer-encoding|content-length|upgrade|te|trailer|proxy-.*|set-cookie|set-cookie2|access-control-.*|strict-transport-security)$/i;
/** A header name (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value without line breaks or NUL. */
export const HEADER_VALUE = /^[^\r\n\0]*$/;
