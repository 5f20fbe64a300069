// Ceiling 1: a bare node:http server answering a small fixed JSON body; nothing can be faster on this machine.
import http from 'node:http';

const body = JSON.stringify({ status: 'ok', database: 'none' });
const server = http.createServer((_req, res) => {
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  // The parent reads the port from this line.
  if (addr && typeof addr === 'object') process.stdout.write(`LISTENING ${addr.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
