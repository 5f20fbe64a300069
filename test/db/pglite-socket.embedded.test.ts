// PGLITE_SOCKET_PORT: a server on the embedded database also serves it on 127.0.0.1:<port> over the PostgreSQL
// wire protocol (for Studio or psql), the same data the server reads and writes, and stops serving it at close.
import net from 'node:net';
import pg from 'pg';
import { expect, it } from 'vitest';
import { ADMIN_EMAIL, call, signIn, withTestServer } from '../helpers/server.js';

/** A port nobody listens on now (the kernel's pick, released). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const connect = async (port: number): Promise<pg.Client> => {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
  await client.connect();
  return client;
};

it('serves the embedded database over the PostgreSQL protocol on PGLITE_SOCKET_PORT', async () => {
  const port = await freePort();
  await withTestServer({ config: { pgliteSocketPort: port } }, async (server) => {
    const client = await connect(port);
    try {
      // The first start's admin, written by the server, read over the wire.
      const users = await client.query<{ email: string }>('SELECT email FROM "User" WHERE email = $1', [
        ADMIN_EMAIL,
      ]);
      expect(users.rows).toEqual([{ email: ADMIN_EMAIL }]);
      // A change over the wire is what the server answers with (one database, not a copy).
      await client.query(`UPDATE "Project" SET name = 'Renamed over the socket'`);
      const me = await call(server.base, 'POST', 'graphql', {
        token: (await signIn(server.base)).access_token,
        headers: { 'content-type': 'application/json' },
        body: { query: '{ me { project { name } } }' },
      });
      expect(me.body.data.me.project.name).toBe('Renamed over the socket');
    } finally {
      await client.end();
    }
  });
  // Closed with the server: nothing listens on the port any more.
  await expect(connect(port)).rejects.toThrow(/ECONNREFUSED/);
}, 60_000);
