// GraphiQL in a real browser (Debian's Chromium driven by playwright-core), on a network with no internet: the page
// renders from this server's own files, the sign-in form obtains a token with PKCE, a query then returns the
// signed-in user's email, and no request leaves loopback. Screenshots go to output/screenshots/ (git-ignored).
// Without /usr/bin/chromium the file is skipped (a fresh developer machine); CI installs Chromium and sets
// REQUIRE_BROWSER=1, which turns a missing browser into a failure.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { haveBrowser, launchChromium, offLoopback, SCREENSHOTS } from '../helpers/browser.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, useTestServer } from '../helpers/server.js';

describe.skipIf(!haveBrowser)('GraphiQL in Chromium', () => {
  const server = useTestServer();
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('renders offline, signs in with PKCE, and a query returns the signed-in email; nothing leaves loopback', async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));

    const res = await page.goto(`${server.base}graphql`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('FHIR server GraphiQL');
    // GraphiQL's editor and run button render (the CDN page showed only "Loading __TITLE__...").
    await page.waitForSelector('.graphiql-container', { timeout: 60_000 });
    await page.waitForSelector('.graphiql-execute-button', { timeout: 60_000 });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'graphiql-loaded.png') });

    await page.fill('#signin-email', ADMIN_EMAIL);
    await page.fill('#signin-password', ADMIN_PASSWORD);
    await page.click('#signin button[type=submit]');
    await page.waitForFunction(
      () => document.getElementById('signin-status')?.textContent?.startsWith('Signed in as'),
      undefined,
      { timeout: 30_000 },
    );

    // Run the Me operation through GraphiQL's own fetcher and read the result pane.
    const answer = page.waitForResponse(
      (r) =>
        r.url().endsWith('/graphql') &&
        r.request().method() === 'POST' &&
        /query Me/.test(r.request().postData() ?? ''),
      { timeout: 30_000 },
    );
    // Several operations: GraphiQL runs the one under the cursor on Ctrl+Enter.
    await page.locator('.graphiql-query-editor .view-lines span', { hasText: 'email' }).first().click();
    await page.keyboard.press('Control+Enter');
    const response = await answer;
    expect(response.request().headers().authorization).toMatch(/^Bearer /);
    const body = (await response.json()) as { data?: { me?: { user?: { email?: string } } } };
    expect(body.data?.me?.user?.email).toBe(ADMIN_EMAIL);
    await page.waitForFunction(
      (email) => document.querySelector('.graphiql-response')?.textContent?.includes(email),
      ADMIN_EMAIL,
      { timeout: 30_000 },
    );
    await page.screenshot({ path: path.join(SCREENSHOTS, 'graphiql-me.png') });

    expect(offLoopback(requested)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);

  it('serves the assets with long-lived caching and 404s unknown ones', async () => {
    const ok = await fetch(`${server.base}graphql/assets/client.js?v=x`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toContain('text/javascript');
    expect(ok.headers.get('cache-control')).toContain('immutable');
    const missing = await fetch(`${server.base}graphql/assets/nope.js`);
    expect(missing.status).toBe(404);
  });
});
