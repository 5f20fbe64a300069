// The browser flow of issue 24 item 5, in a real browser (Debian's Chromium driven by playwright-core): a web app on
// its own localhost origin loads the real, unmodified @medplum/core build (served from node_modules: no network),
// calls MedplumClient.signInWithRedirect; the test fills this server's sign-in page (email and password, then a
// TOTP code computed here with otplib); back on the app, signInWithRedirect runs processCode (PKCE S256 from the
// browser's WebCrypto) and the app calls $expand with the token. Nothing leaves loopback. The app's calls to the
// server cross origins: CORS_ORIGINS names the app. Without /usr/bin/chromium the file is skipped unless
// REQUIRE_BROWSER=1 (CI).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { generate } from 'otplib';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import { haveBrowser, launchChromium, offLoopback, SCREENSHOTS } from '../helpers/browser.js';
import { createClient } from '../helpers/authorize.js';
import { addUser, createProject, type Account } from '../helpers/projects.js';
import { call, useTestServer } from '../helpers/server.js';

const MEDPLUM_ESM = path.resolve(import.meta.dirname, '../../node_modules/@medplum/core/dist/esm/index.mjs');
const VS_URL = 'http://example.org/fhir/ValueSet/browser-colours';
const CS_URL = 'http://example.org/fhir/CodeSystem/browser-colours';

/** The third-party app: one page that signs in with MedplumClient and expands a value set. */
function appPage(serverBase: string, clientId: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Third-party app</title></head>
<body><pre id="out">starting</pre>
<script type="module">
import { MedplumClient } from '/medplum-core.mjs';
const out = document.getElementById('out');
const medplum = new MedplumClient({ baseUrl: ${JSON.stringify(serverBase)}, clientId: ${JSON.stringify(clientId)} });
try {
  const signedIn = await medplum.signInWithRedirect({ scope: 'openid profile email' });
  if (signedIn) {
    const vs = await medplum.valueSetExpand({ url: ${JSON.stringify(VS_URL)} });
    out.textContent = JSON.stringify({
      profile: medplum.getProfile()?.resourceType,
      codes: (vs.expansion?.contains ?? []).map((c) => c.code),
    });
  }
} catch (err) {
  out.textContent = 'error: ' + (err?.message ?? String(err));
}
</script></body></html>`;
}

const config: Partial<Config> = { trustProxy: true };

describe.skipIf(!haveBrowser)('a browser app signs in through /oauth2/authorize with MedplumClient', () => {
  let app: http.Server;
  let appOrigin = '';
  let clientId = '';
  beforeAll(async () => {
    app = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/medplum-core.mjs') {
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(fs.readFileSync(MEDPLUM_ESM));
      } else if (url.pathname === '/') {
        res.writeHead(200, { 'content-type': 'text/html' }).end(appPage(s.base, clientId));
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    // The server below starts after this hook: it lets the app's origin call it (CORS).
    config.corsOrigins = [appOrigin];
  });
  afterAll(async () => {
    await new Promise((resolve) => app?.close(resolve));
  });
  const s = useTestServer({ signIn: true, config });

  let browser: Browser;
  let user: Account;
  let secret = '';
  beforeAll(async () => {
    browser = await launchChromium();
    const admin = await createProject(s.base, s.token, 'Browser app project');
    // MedplumClient's redirect URI is the app's origin with a slash; the app is public (PKCE only).
    clientId = (await createClient(s.base, admin.token, [`${appOrigin}/`])).id;
    user = await addUser(s.base, admin.token);
    for (const resource of [
      {
        resourceType: 'CodeSystem',
        url: CS_URL,
        status: 'active',
        content: 'complete',
        concept: [
          { code: 'red', display: 'Red' },
          { code: 'green', display: 'Green' },
        ],
      },
      { resourceType: 'ValueSet', url: VS_URL, status: 'active', compose: { include: [{ system: CS_URL }] } },
    ]) {
      const r = await call(s.base, 'POST', `fhir/R4/${resource.resourceType}`, {
        token: admin.token,
        body: resource,
      });
      expect(r.status, r.text).toBe(201);
    }
    const status = await call(s.base, 'GET', 'auth/mfa/status', { token: user.token });
    secret = new URL(status.body.enrollUri).searchParams.get('secret') ?? '';
    const enrolled = await call(s.base, 'POST', 'auth/mfa/enroll', {
      token: user.token,
      body: { token: await generate({ secret }) },
      headers: { 'content-type': 'application/json' },
    });
    expect(enrolled.status, enrolled.text).toBe(200);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('signInWithRedirect -> password -> TOTP -> processCode -> $expand with the token', async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));

    await page.goto(`${appOrigin}/`);
    // MedplumClient sends the browser to the server's sign-in page.
    await page.waitForURL((u) => u.href.startsWith(`${s.base}oauth2/authorize?`), { timeout: 30_000 });
    const authorizeUrl = new URL(page.url());
    expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizeUrl.searchParams.get('redirect_uri')).toBe(`${appOrigin}/`);
    await page.fill('#email', user.email);
    await page.fill('#password', user.password);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'authorize-password.png') });
    await page.click('#submit');
    await page.waitForSelector('#token', { timeout: 30_000 });
    // The enrolment used the current step's code; the next step's is accepted too.
    await page.fill('#token', await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
    await page.screenshot({ path: path.join(SCREENSHOTS, 'authorize-totp.png') });
    await page.click('#submit');

    await page.waitForURL((u) => u.href.startsWith(`${appOrigin}/?code=`), { timeout: 30_000 });
    await page.waitForFunction(() => document.getElementById('out')?.textContent !== 'starting', undefined, {
      timeout: 30_000,
    });
    const out = (await page.textContent('#out')) ?? '';
    await page.screenshot({ path: path.join(SCREENSHOTS, 'authorize-app.png') });
    expect(out).not.toMatch(/^error/);
    expect(JSON.parse(out)).toEqual({ profile: 'Practitioner', codes: ['red', 'green'] });

    // The session is the user's, made through the app's client with TOTP.
    const logins = await s.services.db.prisma.login.findMany({
      where: { userId: user.userId, clientId },
      select: { authMethod: true, granted: true },
    });
    expect(logins).toEqual([{ authMethod: 'password+totp', granted: true }]);
    expect(offLoopback(requested)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
