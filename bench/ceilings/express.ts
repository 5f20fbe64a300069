// Ceiling 2: a bare Express app (same major as the server) answering the same small JSON body.
import express from 'express';

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok', database: 'none' });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  // The parent reads the port from this line.
  if (addr && typeof addr === 'object') process.stdout.write(`LISTENING ${addr.port}\n`);
});
server.keepAliveTimeout = 65_000;
process.on('SIGTERM', () => server.close(() => process.exit(0)));
