// `npm run studio`: Prisma Studio over the server's database (DATA_DIR's embedded PGlite, or DATABASE_URL), with no
// internet access. Prisma 6.19's `prisma studio` downloads a query engine to read the schema and shows a blank page
// offline; the current Studio (@prisma/studio-core, what Prisma 7's CLI embeds) reads the tables straight from the
// database through an "executor", so it needs no engine and no schema file. This file bundles its UI once from the
// installed package (esbuild, cached under node_modules/.cache) and serves it with the JSON endpoint it queries.
// Local only: it listens on 127.0.0.1, answers only Host headers naming loopback (no DNS rebinding), and /bff needs a
// per-run token sent as a header (a cross-site form or a `no-cors` fetch can't set one, so no drive-by SQL).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { build } from 'esbuild';
import { serializeError, type StudioBFFRequest } from '@prisma/studio-core/data/bff';
import type { Executor, Query } from '@prisma/studio-core/data';
import { loadConfig } from '../config.js';
import { openDatabase, type Database } from './database.js';

// The package exports no ./package.json: read it beside the resolved data entry (dist/data/index.js).
const STUDIO_VERSION = (
  JSON.parse(
    fs.readFileSync(
      path.resolve(
        path.dirname(createRequire(import.meta.url).resolve('@prisma/studio-core/data')),
        '../../package.json',
      ),
      'utf8',
    ),
  ) as { version: string }
).version;
const TOKEN_HEADER = 'x-studio-token';

/** The browser entry: Studio with the Postgres adapter, talking to /bff with the page's token. */
const ENTRY = `
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import { Studio } from '@prisma/studio-core/ui';
import '@prisma/studio-core/ui/index.css';
import { createStudioBFFClient } from '@prisma/studio-core/data/bff';
import { createPostgresAdapter } from '@prisma/studio-core/data/postgres-core';
// Studio's own opt-out of its launch ping to checkpoint.prisma.io (the page's CSP blocks it anyway).
window.__PDPCP__ = true;
const token = document.querySelector('meta[name="studio-token"]').content;
const executor = createStudioBFFClient({ url: '/bff', customHeaders: { '${TOKEN_HEADER}': token } });
createRoot(document.getElementById('root')).render(
  createElement(Studio, { adapter: createPostgresAdapter({ executor }) }),
);
`;

/** Bundles the UI into node_modules/.cache/fhir-studio/<version>/ unless already there; returns that directory. */
export async function bundleStudio(): Promise<string> {
  const dir = path.resolve('node_modules/.cache/fhir-studio', STUDIO_VERSION);
  if (fs.existsSync(path.join(dir, 'studio.js')) && fs.existsSync(path.join(dir, 'studio.css'))) return dir;
  const tmp = `${dir}.tmp-${process.pid}`;
  await build({
    stdin: { contents: ENTRY, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    format: 'esm',
    minify: true,
    outfile: path.join(tmp, 'studio.js'),
    define: { 'process.env.NODE_ENV': '"production"' },
    loader: { '.woff': 'file', '.woff2': 'file', '.ttf': 'file', '.svg': 'file', '.png': 'file' },
    assetNames: '[name]-[hash]',
    logLevel: 'error',
  });
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(tmp, dir);
  return dir;
}

/** Studio's executor over our Database: one statement, or a transaction when a schema is chosen in the UI. */
export function databaseExecutor(db: Database): Executor {
  const inSchema = (schema: string | undefined, queries: readonly Query<unknown>[]) =>
    db.transaction(async (sql) => {
      if (schema) await sql("SELECT set_config('search_path', $1, true)", [quoteIdent(schema)]);
      const results: unknown[][] = [];
      for (const q of queries) results.push(await sql(q.sql, q.parameters as unknown[]));
      return results;
    });
  return {
    async execute(query, options) {
      try {
        const rows = options?.schema
          ? (await inSchema(options.schema, [query]))[0]
          : await db.sql(query.sql, query.parameters as unknown[]);
        // The result row type is Studio's own inference from its query builder; the rows come from that query.
        return [null, rows as never];
      } catch (err) {
        return [err as Error];
      }
    },
    async executeTransaction(queries) {
      try {
        return [null, (await inSchema(undefined, queries)) as never];
      } catch (err) {
        return [err as Error];
      }
    },
  };
}

function quoteIdent(s: string): string {
  return '"' + s.replace(/"/g, '""') + '"';
}

/** Answers one BFF request (Studio's JSON contract): query, sequence or transaction. */
async function answerBff(executor: Executor, payload: StudioBFFRequest): Promise<[number, unknown]> {
  const ser = (e: Error | null) => (e ? serializeError(e) : null);
  switch (payload.procedure) {
    case 'query': {
      const [error, result] = await executor.execute(payload.query, { schema: payload.schema });
      return [200, [ser(error), result]];
    }
    case 'sequence': {
      const [first, second] = payload.sequence;
      const [e1, r1] = await executor.execute(first);
      if (e1) return [200, [[ser(e1)]]];
      const [e2, r2] = await executor.execute(second);
      return [
        200,
        e2
          ? [[null, r1], [ser(e2)]]
          : [
              [null, r1],
              [null, r2],
            ],
      ];
    }
    case 'transaction': {
      const [error, result] = await executor.executeTransaction!(payload.queries);
      return [200, [ser(error), result]];
    }
    default:
      // sql-lint and query-insights are optional: Studio falls back to EXPLAIN and hides the Queries view.
      return [
        501,
        { error: `procedure ${String((payload as { procedure?: unknown }).procedure)} not supported` },
      ];
  }
}

function page(token: string): string {
  return `<!doctype html>
<html lang="en" style="height:100%">
<head><meta charset="utf-8"><title>Prisma Studio (FHIR server)</title>
<meta name="studio-token" content="${token}">
<link rel="stylesheet" href="/studio.css"></head>
<body style="height:100%;margin:0"><div id="root" style="height:100%"></div>
<script type="module" src="/studio.js"></script></body>
</html>`;
}

// Nothing leaves this server: scripts and fetches to self only (Studio injects <style> elements, hence inline styles).
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const LOOPBACK_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/;

/** Serves Studio on 127.0.0.1:port over db; resolves with the server once listening. */
export async function serveStudio(db: Database, port: number): Promise<http.Server> {
  const dir = await bundleStudio();
  const token = crypto.randomBytes(24).toString('base64url');
  const executor = databaseExecutor(db);
  const types: Record<string, string> = {
    '.js': 'text/javascript; charset=utf-8',
    '.css': 'text/css; charset=utf-8',
    '.woff': 'font/woff',
    '.woff2': 'font/woff2',
    '.ttf': 'font/ttf',
    '.svg': 'image/svg+xml',
    '.png': 'image/png',
  };
  const server = http.createServer((req, res) => {
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, {
        'Content-Type': type,
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': CSP,
      });
      res.end(body);
    };
    if (!LOOPBACK_HOST.test(req.headers.host ?? ''))
      return send(421, 'text/plain', 'Studio answers on loopback only\n');
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && url.pathname === '/')
      return send(200, 'text/html; charset=utf-8', page(token));
    if (req.method === 'GET' && url.pathname === '/favicon.ico') return send(204, 'image/x-icon', '');
    if (req.method === 'GET') {
      const name = path.basename(url.pathname);
      const file = path.join(dir, name);
      if (url.pathname === `/${name}` && types[path.extname(name)] && fs.existsSync(file)) {
        return send(200, types[path.extname(name)], fs.readFileSync(file));
      }
      return send(404, 'text/plain', 'not found\n');
    }
    if (req.method === 'POST' && url.pathname === '/bff') {
      if (req.headers[TOKEN_HEADER] !== token)
        return send(403, 'text/plain', 'missing or wrong studio token\n');
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let payload: StudioBFFRequest;
        try {
          payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as StudioBFFRequest;
        } catch {
          return send(400, 'application/json', JSON.stringify({ error: 'body is not JSON' }));
        }
        answerBff(executor, payload).then(
          ([status, body]) => send(status, 'application/json', JSON.stringify(body)),
          (err: unknown) => send(500, 'application/json', JSON.stringify([serializeError(err as Error)])),
        );
      });
      return;
    }
    send(405, 'text/plain', 'method not allowed\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return server;
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const port = Number(process.env.STUDIO_PORT ?? 5555);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`STUDIO_PORT must be a port number (0-65535), got ${process.env.STUDIO_PORT}\n`);
    process.exit(2);
  }
  // The same opening as the server's (lock, migrations): Studio works on a fresh data directory too.
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    dataDir: config.dataDir,
  });
  const server = await serveStudio(db, port);
  const address = server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  const where = db.kind === 'pglite' ? `embedded database in ${config.dataDir}` : 'DATABASE_URL';
  process.stdout.write(`Prisma Studio (${where}) on http://127.0.0.1:${actual}/  (Ctrl+C to stop)\n`);
  const stop = () => {
    server.close();
    db.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

// Run unconditionally, as the other CLIs: `npm run studio` imports this file from dist/ through scripts/start.mjs,
// so process.argv[1] is the launcher, not this file.
main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
