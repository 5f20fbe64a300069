// Outbound HTTP for bots: the policy that decides which addresses a bot may reach, and the host-side request that
// the isolate's `fetch` is bridged to.
//
// Policy (default, `allowPrivate: false`): only http: and https: URLs; the hostname is resolved with
// `dns.lookup({ all: true })` and the request is refused if ANY resolved address is loopback, link-local, private,
// unique-local, CGNAT, multicast, reserved, unspecified or documentation space (IPv4-mapped, NAT64 and 6to4 IPv6
// forms are unwrapped and checked as IPv4). Names such as `localhost`, `*.localhost` and the cloud metadata names
// are refused before any lookup.
//
// DNS rebinding: the socket connects to the address that was checked. The request is made with node:http(s) and a
// `lookup` override that returns only that pinned address, so a second resolution by the HTTP client (which an
// attacker-controlled DNS server could answer differently) never happens. TLS still verifies the certificate
// against the original hostname (SNI/servername is the hostname). Every redirect hop is re-resolved and re-checked.
// (Node's global fetch offers no public way to pin the connect address without the undici package, which is why
// this uses node:http(s) rather than fetch.)
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

export interface FetchPolicy {
  /** Allow loopback/private/link-local destinations (tests, trusted administrators). Default false. */
  allowPrivate?: boolean;
  /** Disable outbound fetch entirely. Default true (enabled). */
  enabled?: boolean;
  /** Maximum response body size in bytes; larger bodies fail the fetch. Default 10 MiB. */
  maxResponseBytes?: number;
  /** Maximum request body size in bytes. Default 10 MiB. */
  maxRequestBytes?: number;
  /** Maximum redirects followed (redirect: 'follow'). Default 5. */
  maxRedirects?: number;
}

export interface BridgedFetchRequest {
  url: string;
  method: string;
  headers: [string, string][];
  body?: string;
  redirect?: 'follow' | 'manual' | 'error';
}

export interface BridgedFetchResponse {
  status: number;
  statusText: string;
  url: string;
  redirected: boolean;
  headers: [string, string][];
  body: string;
}

export class FetchRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FetchRefusedError';
  }
}

const BLOCKED_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network", includes the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, includes 169.254.169.254 (cloud metadata)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes broadcast
];

const BLOCKED_V6: [string, number][] = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::', 96], // deprecated IPv4-compatible addresses
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local, includes fd00:ec2::254 (AWS metadata over IPv6)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
];

const blockList = new net.BlockList();
for (const [addr, prefix] of BLOCKED_V4) blockList.addSubnet(addr, prefix, 'ipv4');
for (const [addr, prefix] of BLOCKED_V6) blockList.addSubnet(addr, prefix, 'ipv6');

const BLOCKED_HOSTNAMES = new Set(['localhost', 'metadata', 'metadata.google.internal', 'instance-data']);

/** Parses an IPv6 literal into 16 bytes, or returns undefined. */
function parseIpv6(address: string): number[] | undefined {
  if (net.isIPv6(address) === false) return undefined;
  let text = address.split('%')[0]; // zone id
  const bytes: number[] = [];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let tail: number[] = [];
  if (v4) {
    tail = v4[1].split('.').map(Number);
    text = text.slice(0, -v4[1].length) + '0:0';
  }
  const [head, rest] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const restGroups = rest !== undefined && rest !== '' ? rest.split(':') : [];
  const missing = 8 - headGroups.length - restGroups.length;
  const groups =
    rest === undefined ? headGroups : [...headGroups, ...Array(missing).fill('0'), ...restGroups];
  for (const g of groups) {
    const n = parseInt(g, 16);
    bytes.push((n >> 8) & 0xff, n & 0xff);
  }
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes.length === 16 ? bytes : undefined;
}

/** An IPv4 address embedded in an IPv6 one (mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16). */
function embeddedIpv4(address: string): string | undefined {
  const b = parseIpv6(address);
  if (!b) return undefined;
  const zero = (from: number, to: number): boolean => b.slice(from, to).every((x) => x === 0);
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return b.slice(12, 16).join('.');
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) {
    return b.slice(12, 16).join('.');
  }
  if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6).join('.');
  return undefined;
}

/** True if a bot must not connect to this IP address under the default policy. */
export function isForbiddenAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blockList.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 !== undefined && blockList.check(v4, 'ipv4')) return true;
    return blockList.check(address.split('%')[0], 'ipv6');
  }
  return true; // not an IP address at all
}

/** True if the hostname itself is refused before resolution. */
export function isForbiddenHostname(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return BLOCKED_HOSTNAMES.has(h) || h.endsWith('.localhost') || h === '';
}

interface ResolvedTarget {
  address: string;
  family: 4 | 6;
}

/** Resolves and checks a URL's host; returns the address to connect to. Throws FetchRefusedError. */
export async function resolveTarget(url: URL, allowPrivate: boolean): Promise<ResolvedTarget> {
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isForbiddenHostname(hostname)) {
    throw new FetchRefusedError(`fetch to ${url.host} refused: host is not allowed`);
  }
  let addresses: dns.LookupAddress[];
  if (net.isIP(hostname)) {
    addresses = [{ address: hostname, family: net.isIP(hostname) }];
  } else {
    try {
      addresses = await dns.promises.lookup(hostname, { all: true, verbatim: true });
    } catch {
      throw new FetchRefusedError(`fetch to ${url.host} failed: host could not be resolved`);
    }
  }
  if (addresses.length === 0) throw new FetchRefusedError(`fetch to ${url.host} failed: no addresses`);
  if (!allowPrivate) {
    const bad = addresses.find((a) => isForbiddenAddress(a.address));
    if (bad) {
      throw new FetchRefusedError(
        `fetch to ${url.host} refused: it resolves to a loopback, private, link-local or reserved address`,
      );
    }
  }
  const first = addresses[0];
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

const DROPPED_REQUEST_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
  'proxy-authorization',
  'accept-encoding', // we never decompress: no decompression bombs, bodies are returned as sent
  'expect',
]);

interface OneResponse {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: string;
  location?: string;
}

function requestOnce(
  url: URL,
  target: ResolvedTarget,
  req: BridgedFetchRequest,
  maxResponseBytes: number,
  signal: AbortSignal,
): Promise<OneResponse> {
  return new Promise<OneResponse>((resolve, reject) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of req.headers) {
      const name = k.toLowerCase();
      if (!DROPPED_REQUEST_HEADERS.has(name)) headers[name] = v;
    }
    const body = req.body === undefined ? undefined : Buffer.from(req.body, 'utf8');
    if (body) headers['content-length'] = String(body.length);
    const lookup = (
      _host: string,
      options: { all?: boolean },
      cb: (err: Error | null, address: string | dns.LookupAddress[], family?: number) => void,
    ): void => {
      if (options.all) cb(null, [{ address: target.address, family: target.family }]);
      else cb(null, target.address, target.family);
    };
    const mod = url.protocol === 'https:' ? https : http;
    const r = mod.request(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || undefined,
        path: url.pathname + url.search,
        method: req.method,
        headers,
        lookup: lookup as unknown as net.LookupFunction,
        signal,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxResponseBytes) {
            res.destroy();
            reject(new FetchRefusedError(`fetch response body exceeds ${maxResponseBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', (err) => reject(err));
        res.on('end', () => {
          const out: [string, string][] = [];
          const raw = res.rawHeaders;
          for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i].toLowerCase(), raw[i + 1]]);
          resolve({
            status: res.statusCode ?? 0,
            statusText: res.statusMessage ?? '',
            headers: out,
            body: Buffer.concat(chunks).toString('utf8'),
            location: typeof res.headers.location === 'string' ? res.headers.location : undefined,
          });
        });
      },
    );
    r.on('error', (err) => reject(err));
    r.end(body);
  });
}

/** Performs a bot's fetch under the policy. Errors are thrown with bot-safe messages. */
export async function policyFetch(
  req: BridgedFetchRequest,
  policy: Required<FetchPolicy>,
  signal: AbortSignal,
): Promise<BridgedFetchResponse> {
  if (!policy.enabled) throw new FetchRefusedError('fetch is disabled in this bot sandbox');
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    throw new FetchRefusedError(`invalid URL: ${String(req.url).slice(0, 200)}`);
  }
  if (req.body !== undefined && Buffer.byteLength(req.body) > policy.maxRequestBytes) {
    throw new FetchRefusedError(`fetch request body exceeds ${policy.maxRequestBytes} bytes`);
  }
  let current = { ...req };
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new FetchRefusedError(`fetch refused: only http: and https: URLs are allowed`);
    }
    if (url.username || url.password) throw new FetchRefusedError('fetch refused: credentials in URL');
    const target = await resolveTarget(url, policy.allowPrivate);
    let res: OneResponse;
    try {
      res = await requestOnce(url, target, current, policy.maxResponseBytes, signal);
    } catch (err) {
      if (err instanceof FetchRefusedError) throw err;
      if (signal.aborted) throw new FetchRefusedError('fetch aborted: the bot execution ended');
      const code = (err as { code?: unknown }).code;
      throw new FetchRefusedError(
        `fetch to ${url.host} failed${typeof code === 'string' ? ` (${code})` : ''}`,
      );
    }
    const isRedirect = [301, 302, 303, 307, 308].includes(res.status) && res.location !== undefined;
    if (!isRedirect || current.redirect === 'manual') {
      return {
        status: res.status,
        statusText: res.statusText,
        url: url.href,
        redirected: hop > 0,
        headers: res.headers,
        body: res.body,
      };
    }
    if (current.redirect === 'error')
      throw new FetchRefusedError('fetch failed: redirect with redirect: "error"');
    if (hop >= policy.maxRedirects) throw new FetchRefusedError('fetch failed: too many redirects');
    const next = new URL(res.location as string, url);
    if (next.origin !== url.origin) {
      // Like fetch: credentials are not forwarded to another origin.
      current = {
        ...current,
        headers: current.headers.filter(([k]) => !['authorization', 'cookie'].includes(k.toLowerCase())),
      };
    }
    url = next;
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && current.method === 'POST')) {
      current = { ...current, method: 'GET', body: undefined };
    }
  }
}
