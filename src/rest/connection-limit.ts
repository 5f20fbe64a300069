// A cap on open connections per client address: one address holding thousands of (slow) connections would
// otherwise use up the server's sockets and memory for everyone. Connections over the cap are closed at once.
import type http from 'node:http';
import type { Socket } from 'node:net';

/** Closes every new connection from an address that already holds `max` open ones (0: no limit). */
export function limitConnectionsPerAddress(server: http.Server, max: number): void {
  if (max <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const n = open.get(address) ?? 0;
    if (n >= max) {
      socket.destroy();
      return;
    }
    open.set(address, n + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
