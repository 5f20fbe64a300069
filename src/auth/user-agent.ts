// Browser and OS names from a User-Agent header, for the session list.
import Bowser from 'bowser';

/** Parses a User-Agent into display names (undefined parts when unknown). */
export function describeUserAgent(ua: string | null | undefined): { browser?: string; os?: string } {
  if (!ua) return {};
  try {
    const r = Bowser.parse(ua);
    const browser = [r.browser.name, r.browser.version].filter(Boolean).join(' ') || undefined;
    const os = [r.os.name, r.os.versionName ?? r.os.version].filter(Boolean).join(' ') || undefined;
    return { browser, os };
  } catch {
    return {};
  }
}
