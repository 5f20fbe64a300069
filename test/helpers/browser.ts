// Shared by the browser tests: which requests a page made left this machine.

/** The requested URLs that went off loopback (data: and blob: URLs never leave the page). */
export function offLoopback(urls: string[]): string[] {
  return urls.filter((u) => {
    const url = new URL(u);
    if (url.protocol === 'data:' || url.protocol === 'blob:') return false;
    return !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  });
}
