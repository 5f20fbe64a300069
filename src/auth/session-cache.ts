// In-memory cache of Login state, so authenticating a request costs no database round trip.
//
// Cross-instance protocol (PostgreSQL LISTEN/NOTIFY; PGlite has one process and the same code path):
// - Every change to a Login is announced on LOGIN_CHANNEL as `loginId|origin|seq`. Each instance drops its copy and,
//   when the change came from another instance, answers on ACK_CHANNEL with `origin|seq|self`.
// - Instances know each other through PEER_CHANNEL: `hello` at start and after a listener reconnect (answered with
//   `here`), `here` as a heartbeat, `bye` at shutdown. Peers not heard from for PEER_TTL_MS are forgotten.
// - A revocation returns only when every known peer has acknowledged it (bounded by the announce timeout, 5 s). That
//   is the guarantee "a request sent after the revoke returned is refused on every instance": an acknowledged peer
//   has already dropped the Login, so its next request loads the revoked row from the database. A peer that misses
//   the timeout is logged; it is forgotten only if it has also been silent for two heartbeats (presumed dead).
// - A load that was in flight when its Login was invalidated is returned to its (earlier) caller but never cached,
//   and later callers do not join it.
// - While the notification connection is down the cache is bypassed (correct, slower); it is emptied when the
//   connection comes back, and for CACHE_WARMUP_MS after start or reconnect, until peers have heard our hello.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import type { Principal } from '../core/caller.js';

/** A Login's cached state: the caller it authenticates, and whether it may still be used. */
export interface SessionState extends Principal {
  granted: boolean;
  revoked: boolean;
  expiresAt: number;
}

/** Not revoked, not expired, and tokens were issued. */
export function isActive(s: SessionState): boolean {
  return !s.revoked && s.granted && s.expiresAt > Date.now();
}

export const LOGIN_CHANNEL = 'login_changed';
export const ACK_CHANNEL = 'login_ack';
export const PEER_CHANNEL = 'login_peers';
const MAX_ENTRIES = 50_000;
const HEARTBEAT_MS = 5_000;
const PEER_TTL_MS = 20_000;
const CACHE_WARMUP_MS = 1_000;
/** How long a revocation waits for peers' acknowledgements. Generous: a peer under load answers late (its
 * acknowledgement queues behind its own database work), and returning early would void the guarantee. */
const ACK_TIMEOUT_MS = 5_000;

type LoginRow = {
  id: string;
  userId: string | null;
  clientId: string | null;
  projectId: string;
  membershipId: string;
  admin: boolean;
  scope: string;
  authMethod: string;
  granted: boolean;
  revokedAt: Date | string | null;
  expiresAt: Date | string;
};

interface Load {
  promise: Promise<SessionState | undefined>;
  /** Set when the Login was invalidated while this load ran: its result must not be cached. */
  stale: boolean;
}

interface PendingAnnounce {
  waitingFor: Set<string>;
  done: () => void;
}

/** Login states by id, kept fresh across instances by LISTEN/NOTIFY with acknowledgements. */
export class SessionCache {
  readonly instanceId = crypto.randomUUID();
  private entries = new Map<string, SessionState>();
  private loads = new Map<string, Load>();
  /** Other instances on the same database, with the time they were last heard from. */
  private peers = new Map<string, number>();
  private pending = new Map<number, PendingAnnounce>();
  private seq = 0;
  private cacheFrom = Number.POSITIVE_INFINITY;
  private heartbeat?: NodeJS.Timeout;
  private closed = false;

  constructor(
    private db: Database,
    private logger?: Logger,
  ) {}

  /** Subscribes to the channels and introduces this instance to its peers. */
  async start(): Promise<void> {
    await this.db.listen(LOGIN_CHANNEL, (payload) => this.onChange(payload));
    await this.db.listen(ACK_CHANNEL, (payload) => this.onAck(payload));
    await this.db.listen(PEER_CHANNEL, (payload) => this.onPeer(payload));
    this.db.onReset(() => {
      this.clear();
      // After a reconnect, peers may have forgotten us: introduce ourselves again before trusting the cache.
      if (this.db.listening) void this.hello();
    });
    await this.hello();
    this.heartbeat = setInterval(() => {
      void this.sendPeer('here');
      const cutoff = Date.now() - PEER_TTL_MS;
      for (const [id, seen] of this.peers) if (seen < cutoff) this.peers.delete(id);
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Says goodbye to the peers (they stop waiting for our acknowledgements). */
  async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    await this.sendPeer('bye');
  }

  /** How many other instances this one knows (for tests and diagnostics). */
  get peerCount(): number {
    return this.peers.size;
  }

  private async hello(): Promise<void> {
    this.cacheFrom = Date.now() + CACHE_WARMUP_MS;
    await this.sendPeer('hello');
  }

  private async sendPeer(kind: 'hello' | 'here' | 'bye'): Promise<void> {
    try {
      await this.db.notify(PEER_CHANNEL, `${kind}|${this.instanceId}`);
    } catch (err) {
      this.logger?.warn({ err: (err as Error).message }, 'could not notify session cache peers');
    }
  }

  private onPeer(payload: string): void {
    const [kind, id] = payload.split('|');
    if (!id || id === this.instanceId) return;
    if (kind === 'bye') {
      this.peers.delete(id);
      this.forgetPeerInPending(id);
      return;
    }
    const known = this.peers.has(id);
    this.peers.set(id, Date.now());
    if (kind === 'hello' && !this.closed) void this.sendPeer('here');
    else if (!known && kind === 'here') this.logger?.debug({ peer: id }, 'session cache peer joined');
  }

  private onChange(payload: string): void {
    const [loginId, origin, seq] = payload.split('|');
    if (!loginId) return;
    this.invalidate(loginId);
    if (origin && origin !== this.instanceId && seq) {
      // Acknowledge only after the entry is gone: the origin's caller relies on that.
      void this.db.notify(ACK_CHANNEL, `${origin}|${seq}|${this.instanceId}`).catch((err: unknown) => {
        this.logger?.warn({ err: (err as Error).message }, 'could not acknowledge a session change');
      });
    }
    if (origin && this.peers.has(origin)) this.peers.set(origin, Date.now());
  }

  private onAck(payload: string): void {
    const [origin, seqText, from] = payload.split('|');
    if (origin !== this.instanceId || !from) return;
    this.peers.set(from, Date.now());
    const p = this.pending.get(Number(seqText));
    if (!p) return;
    p.waitingFor.delete(from);
    if (p.waitingFor.size === 0) p.done();
  }

  private forgetPeerInPending(id: string): void {
    for (const p of this.pending.values()) {
      p.waitingFor.delete(id);
      if (p.waitingFor.size === 0) p.done();
    }
  }

  private cacheUsable(): boolean {
    return this.db.listening && Date.now() >= this.cacheFrom;
  }

  /** The Login's current state, from cache or database. */
  /** The cached state of a Login when the cache can be trusted now; undefined means: ask get(). */
  cached(loginId: string): SessionState | undefined {
    return this.cacheUsable() ? this.entries.get(loginId) : undefined;
  }

  async get(loginId: string): Promise<SessionState | undefined> {
    if (this.cacheUsable()) {
      const hit = this.entries.get(loginId);
      if (hit) return hit;
    }
    const running = this.loads.get(loginId);
    if (running && !running.stale) return running.promise;
    const load: Load = { stale: false, promise: Promise.resolve(undefined) };
    const usableAtStart = this.cacheUsable();
    load.promise = this.read(loginId).then(
      (state) => {
        if (this.loads.get(loginId) === load) this.loads.delete(loginId);
        if (state && usableAtStart && !load.stale && this.cacheUsable()) {
          if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
          this.entries.set(loginId, state);
        }
        return state;
      },
      (err: unknown) => {
        if (this.loads.get(loginId) === load) this.loads.delete(loginId);
        throw err;
      },
    );
    this.loads.set(loginId, load);
    return load.promise;
  }

  private async read(loginId: string): Promise<SessionState | undefined> {
    const rows = await this.db.sql<LoginRow>(
      `SELECT l.id, l."userId", l."clientId", l."projectId", l."membershipId", m.admin, l.scope, l."authMethod",
              l.granted, l."revokedAt", l."expiresAt"
         FROM "Login" l JOIN "ProjectMembership" m ON m.id = l."membershipId" WHERE l.id = $1`,
      [loginId],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      loginId: row.id,
      userId: row.userId,
      clientId: row.clientId,
      projectId: row.projectId,
      membershipId: row.membershipId,
      admin: row.admin,
      scope: row.scope,
      authMethod: row.authMethod,
      granted: row.granted,
      revoked: row.revokedAt !== null,
      expiresAt: new Date(row.expiresAt).getTime(),
    };
  }

  /** Forgets one Login (called on notification, and locally right after a change). */
  invalidate(loginId: string): void {
    this.entries.delete(loginId);
    const running = this.loads.get(loginId);
    if (running) {
      running.stale = true;
      this.loads.delete(loginId);
    }
  }

  /** Marks a Login revoked locally at once (before any notification comes back). */
  markRevoked(loginId: string): void {
    this.invalidate(loginId);
  }

  /**
   * Announces a change of a Login to every instance. With `wait`, resolves once every known peer has acknowledged
   * that it dropped the Login (or after waitMs: late peers are logged, and forgotten if also silent for two heartbeats).
   */
  async announce(loginId: string, opts: { wait?: boolean; waitMs?: number } = {}): Promise<void> {
    const wait = opts.wait ?? true;
    const seq = ++this.seq;
    const waitingFor = new Set(this.peers.keys());
    let done: () => void = () => undefined;
    const acked = new Promise<void>((resolve) => (done = resolve));
    if (wait && waitingFor.size > 0) this.pending.set(seq, { waitingFor, done });
    try {
      await this.db.notify(LOGIN_CHANNEL, `${loginId}|${this.instanceId}|${seq}`);
      if (!wait || waitingFor.size === 0) return;
      const timer = setTimeout(done, opts.waitMs ?? ACK_TIMEOUT_MS);
      await acked;
      clearTimeout(timer);
      if (waitingFor.size > 0) {
        // A peer that is merely busy still gets the notification and drops the entry late; one that has also
        // missed its heartbeats is presumed gone, so later revocations stop waiting for it.
        const quietSince = Date.now() - 2 * HEARTBEAT_MS;
        const gone = [...waitingFor].filter((id) => (this.peers.get(id) ?? 0) < quietSince);
        for (const id of gone) this.peers.delete(id);
        this.logger?.warn(
          { peers: [...waitingFor], forgotten: gone, loginId },
          'session cache peers did not acknowledge a revocation in time',
        );
      }
    } finally {
      this.pending.delete(seq);
    }
  }

  /** Drops every cached state (listener reconnect: notifications may have been missed). */
  clear(): void {
    this.entries.clear();
    for (const l of this.loads.values()) l.stale = true;
    this.loads.clear();
  }
}
