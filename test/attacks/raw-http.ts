// Raw HTTP/1.1 over a TCP socket, for attacks that a fetch client cannot make (trickled bodies, idle keep-alive
// connections, many open connections).
import net from 'node:net';

/** A TCP connection to the target with everything it received. */
export interface RawConnection {
  socket: net.Socket;
  /** Everything received so far. */
  received(): string;
  /** True once the server closed (or reset) the connection. */
  closed(): boolean;
  /** Resolves when the connection closes. */
  whenClosed: Promise<void>;
}

/** Opens a TCP connection to the target's port. */
export async function connect(port: number): Promise<RawConnection> {
  const socket = net.connect(port, '127.0.0.1');
  let data = '';
  let isClosed = false;
  socket.on('data', (d: Buffer) => (data += d.toString()));
  socket.on('error', () => undefined);
  const whenClosed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      isClosed = true;
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, received: () => data, closed: () => isClosed, whenClosed };
}

/** Waits until `check` is true, polling every 20 ms, at most `ms`. */
export async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** The status codes of the responses in `text`, in order. */
export function statuses(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
}
