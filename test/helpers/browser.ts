// Shared by the browser tests: Debian's Chromium driven by playwright-core, launched for a machine without internet
// access, where the screenshots go, and which requests a page made left this machine.
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/** The browser binary: Debian's `chromium` package (never `npx playwright install`: its downloads fail here). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where the browser tests save screenshots (git-ignored; CI keeps them as artifacts). */
export const SCREENSHOTS = path.resolve(import.meta.dirname, '../../output/screenshots');

/** Whether Chromium is installed. Without it the browser tests are skipped (a fresh developer machine), unless
 * REQUIRE_BROWSER=1 (CI), which makes a missing browser an error. */
export const haveBrowser = ((): boolean => {
  if (fs.existsSync(CHROMIUM)) return true;
  if (process.env.REQUIRE_BROWSER === '1') {
    throw new Error(`REQUIRE_BROWSER=1 but no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  }
  return false;
})();

/** Launches headless Chromium with nothing of its own going to the network (no background requests, component
 * updates or first-run pages), so that every request the tests see comes from the page. */
export function launchChromium(): Promise<Browser> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}

/** The requested URLs that went off loopback (data: and blob: URLs never leave the page). */
export function offLoopback(urls: string[]): string[] {
  return urls.filter((u) => {
    const url = new URL(u);
    if (url.protocol === 'data:' || url.protocol === 'blob:') return false;
    return !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  });
}
