// GraphiQL served from the installed @graphql-yoga/render-graphiql package: the page, its script, its styles and
// its editor workers all come from this server, so it works on a network without internet access and loads
// nothing from a CDN (yoga's default page loads six files from unpkg.com and a favicon from GitHub). The assets are
// separate, cacheable files instead of yoga's 9 MB all-inline page, and the page has no inline script (so a
// `script-src 'self'` Content-Security-Policy allows it).
import crypto from 'node:crypto';
import type { Express } from 'express';
import { GRAPHIQL_CLIENT_SCRIPT } from './graphiql-client.js';

/** What the page shows first: one operation per capability, and how to authorize. */
export const DEFAULT_QUERY = `# Welcome. Sign in with the form above (or paste a token in Headers below:
#   {"Authorization": "Bearer <access_token>"}), pick an operation with the run button, and run it.

# Sessions: who am I, and where am I signed in?
query Me {
  me {
    user { email }
    project { name }
    sessions { id browser os current lastUsed }
  }
}

# Terminology: expand a value set, filtered and paged.
query Expand {
  expandValueSet(url: "http://hl7.org/fhir/ValueSet/administrative-gender", filter: "fe", count: 10)
}

# Bots: run a bot by id (create and deploy one through [base]/Bot first).
mutation RunBot {
  executeBot(id: "<bot id>", contentType: "application/json", body: "{\\"name\\":\\"Ada\\"}") {
    status
    contentType
    body
  }
}
`;

type Asset = { body: Buffer; type: string };

let assets: Promise<Map<string, Asset>> | undefined;
let version = '';

/** The assets by file name, loaded on first use: importing the package keeps its ~9 MB of strings, twice over
 * (module source and parsed strings, ~28 MB of heap), in every server, and most never serve GraphiQL. */
function loadAssets(): Promise<Map<string, Asset>> {
  assets ??= import('@graphql-yoga/render-graphiql/graphiql').then((g) => {
    const list: Array<[string, string, string]> = [
      ['graphiql.js', g.js, 'text/javascript; charset=utf-8'],
      ['graphiql.css', g.css, 'text/css; charset=utf-8'],
      ['client.js', GRAPHIQL_CLIENT_SCRIPT, 'text/javascript; charset=utf-8'],
      ['editorWorkerService.worker.js', g.editorWorkerService, 'text/javascript; charset=utf-8'],
      ['json.worker.js', g.jsonWorker, 'text/javascript; charset=utf-8'],
      ['graphql.worker.js', g.graphqlWorker, 'text/javascript; charset=utf-8'],
    ];
    const hash = crypto.createHash('sha256');
    const out = new Map<string, Asset>();
    for (const [name, text, type] of list) {
      const body = Buffer.from(text, 'utf8');
      hash.update(body);
      out.set(name, { body, type });
    }
    const icon = /^data:([^;]+);base64,(.*)$/.exec(g.favicon);
    if (icon) out.set('favicon.ico', { body: Buffer.from(icon[2], 'base64'), type: icon[1] });
    version = hash.digest('hex').slice(0, 12);
    return out;
  });
  return assets;
}

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/** The HTML page (yoga's `renderGraphiQL` option); `basePath` is BASE_URL's path ("/" by default). Options travel
 * as JSON in a data attribute, not in an inline script. */
export async function renderGraphiQLPage(
  basePath: string,
  options: Record<string, unknown>,
): Promise<string> {
  await loadAssets();
  const a = (name: string) => `${basePath}graphql/assets/${name}?v=${version}`;
  const config = escapeHtml(
    JSON.stringify({
      ...options,
      endpoint: `${basePath}graphql`,
      defaultQuery: DEFAULT_QUERY,
      basePath,
      assetVersion: version,
    }),
  );
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>FHIR server GraphiQL</title>
    <link rel="icon" href="${a('favicon.ico')}" />
    <link rel="stylesheet" href="${a('graphiql.css')}" />
    <style>
      body { margin: 0; height: 100vh; display: flex; flex-direction: column; font-family: system-ui, sans-serif; }
      .signin { display: flex; gap: 8px; align-items: center; padding: 6px 12px; border-bottom: 1px solid #ddd; font-size: 14px; }
      .signin input { padding: 3px 6px; }
      #root { flex: 1; min-height: 0; }
    </style>
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>GraphiQL needs JavaScript.</noscript>
    <form id="signin" class="signin" data-config="${config}">
      <strong>Sign in</strong>
      <input id="signin-email" type="email" autocomplete="username" placeholder="email" required />
      <input id="signin-password" type="password" autocomplete="current-password" placeholder="password" required />
      <button type="submit">Sign in</button>
      <span id="signin-status" role="status">Not signed in: sign in here, or add an Authorization header below.</span>
    </form>
    <div id="root"></div>
    <script src="${a('graphiql.js')}"></script>
    <script src="${a('client.js')}"></script>
  </body>
</html>`;
}

/** Registers GET /graphql/assets/<name> (before yoga, which owns /graphql). Versioned URLs: cached for a year. */
export function registerGraphiQLAssets(app: Express): void {
  app.get('/graphql/assets/:name', async (req, res) => {
    const asset = (await loadAssets()).get(req.params.name);
    if (!asset) {
      res.status(404).type('text/plain').send('Not found');
      return;
    }
    res.setHeader('Content-Type', asset.type);
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end(asset.body);
  });
}
