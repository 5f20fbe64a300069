// Draining an HTTP server at shutdown: no new request is taken on any connection, requests in flight finish.
import type http from 'node:http';

/** Marks every response `Connection: close` once `draining()` is true, so a keep-alive connection closes after
 * the request it is serving instead of taking another one. Returns the function that marks the responses already
 * in flight when draining starts (their headers may not be written yet). */
export function closeConnectionsWhenDraining(server: http.Server, draining: () => boolean): () => void {
  const inFlight = new Set<http.ServerResponse>();
  // Prepended: it must run before the app, which may answer synchronously.
  server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    if (draining()) {
      res.setHeader('Connection', 'close');
      return;
    }
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });
  return () => {
    for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
  };
}

/** Stops accepting connections and waits for in-flight requests, at most `graceMs`; then drops what is left.
 * Idle keep-alive connections are closed at once and again every 100 ms, as busy ones go idle. */
export async function drain(server: http.Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 100);
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<'grace'>((resolve) => {
    timer = setTimeout(() => resolve('grace'), graceMs);
  });
  try {
    if ((await Promise.race([closed, grace])) === 'grace') server.closeAllConnections();
  } finally {
    clearInterval(sweep);
    clearTimeout(timer);
  }
}
