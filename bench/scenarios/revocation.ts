// Revocation under load: loops hammer GET /auth/me and GraphQL me with one token while another session revokes it.
// Every request's send time and status is recorded; a 200 for a request sent after the revoke call
// returned is a failure of the "revoked on the very next request, on every instance" guarantee.
import { request, signIn } from '../lib/client.js';
import type { Proc } from '../lib/procs.js';

/** What happened around one revoke. */
export interface RevocationResult {
  instances: string[];
  loops: number;
  requests: number;
  /** Requests sent after the revoke call returned that still got 200 (goal: 0). */
  successesAfterRevoke: number;
  /** Requests sent after the revoke returned that got neither 200 nor 401. */
  otherAfterRevoke: number;
  /** Requests sent while the revoke was in flight that got 200 (allowed: the order is undefined). */
  inFlightSuccesses: number;
  revokeMs: number;
  /** Throughput of the loops before the revoke (req/s, all instances). */
  rpsBefore: number;
  statusCounts: Record<string, number>;
  /** Send time of the last 200 and of the first 401, in ms relative to the moment the revoke was sent. */
  lastOkSentMs?: number;
  first401SentMs?: number;
}

interface Sample {
  sentAt: number;
  status: number;
}

/** Runs the revocation scenario: `loadOn` instances are hammered, the revoke goes to `revokeOn`. */
export async function revocationUnderLoad(
  revokeOn: Proc,
  loadOn: Proc[],
  opts: { loopsPerInstance: number; beforeMs: number; afterMs: number },
): Promise<RevocationResult> {
  const victim = await signIn(revokeOn.base);
  const admin = await signIn(revokeOn.base);
  // Warm every instance's session cache with the victim token (the interesting case: a cached valid session).
  for (const p of loadOn) {
    const r = await request(p.base, 'GET', 'auth/me', { token: victim.accessToken });
    if (r.status !== 200) throw new Error(`victim token refused before the revoke on ${p.name}: ${r.status}`);
  }
  const samples: Sample[] = [];
  let stop = false;
  const auth = `Bearer ${victim.accessToken}`;
  // Half the loops use GET /auth/me (the call), half the cheapest authenticated call
  // (GraphQL `{ me { loginId } }`), which packs more requests into the moments around the revoke.
  const meMin = JSON.stringify({ query: '{ me { loginId } }' });
  const loop = async (base: string, cheap: boolean) => {
    const init: RequestInit = cheap
      ? { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: meMin }
      : { headers: { authorization: auth } };
    const url = cheap ? `${base}graphql` : `${base}auth/me`;
    while (!stop) {
      const sentAt = performance.now();
      let status = 0;
      try {
        const res = await fetch(url, init);
        await res.arrayBuffer();
        status = res.status;
      } catch {
        status = -1;
      }
      samples.push({ sentAt, status });
    }
  };
  const loops: Promise<void>[] = [];
  for (const p of loadOn)
    for (let i = 0; i < opts.loopsPerInstance; i++) loops.push(loop(p.base, i % 2 === 1));
  const loadStart = performance.now();
  await new Promise((r) => setTimeout(r, opts.beforeMs));
  const revokeSent = performance.now();
  const rev = await request(revokeOn.base, 'POST', 'auth/revoke', {
    token: admin.accessToken,
    body: { loginId: victim.loginId },
    contentType: 'application/json',
  });
  const revokeDone = performance.now();
  if (rev.status !== 200) {
    stop = true;
    await Promise.all(loops);
    throw new Error(`revoke returned ${rev.status}: ${rev.text.slice(0, 200)}`);
  }
  await new Promise((r) => setTimeout(r, opts.afterMs));
  stop = true;
  await Promise.all(loops);

  const statusCounts: Record<string, number> = {};
  let successesAfterRevoke = 0;
  let otherAfterRevoke = 0;
  let inFlightSuccesses = 0;
  let before = 0;
  let lastOk: number | undefined;
  let first401: number | undefined;
  for (const s of samples) {
    if (s.status === 200) lastOk = Math.max(lastOk ?? -Infinity, s.sentAt - revokeSent);
    if (s.status === 401) first401 = Math.min(first401 ?? Infinity, s.sentAt - revokeSent);
    statusCounts[s.status] = (statusCounts[s.status] ?? 0) + 1;
    if (s.sentAt >= revokeDone) {
      if (s.status === 200) successesAfterRevoke++;
      else if (s.status !== 401) otherAfterRevoke++;
    } else if (s.sentAt >= revokeSent && s.status === 200) inFlightSuccesses++;
    else if (s.sentAt < revokeSent) before++;
  }
  return {
    instances: loadOn.map((p) => p.name),
    loops: loops.length,
    requests: samples.length,
    successesAfterRevoke,
    otherAfterRevoke,
    inFlightSuccesses,
    revokeMs: revokeDone - revokeSent,
    rpsBefore: before / ((revokeSent - loadStart) / 1000),
    statusCounts,
    lastOkSentMs: lastOk,
    first401SentMs: first401,
  };
}
