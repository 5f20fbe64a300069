// In-memory lookups for the execution hot path: bot id -> deployable bot, (project, identifier) -> bot id, and
// project -> secrets. Every instance drops entries on NOTIFY (bot_changed / bot_secrets_changed); a generation
// counter keeps a fill that raced with an invalidation from storing stale data. While the notification
// connection is down, the cache is bypassed.
import type { Database } from '../db/database.js';
import type { DeployedBot } from './types.js';

export const BOT_CHANGED = 'bot_changed';
export const SECRETS_CHANGED = 'bot_secrets_changed';

/** A project secret as bots see it (Medplum's shape). */
export interface BotSecret {
  name: string;
  valueString: string;
}

const MAX_ENTRIES = 10_000;

/** The bot lookup cache of one server instance. */
export class BotCache {
  private bots = new Map<string, DeployedBot>();
  private identifiers = new Map<string, string>();
  private secrets = new Map<string, Record<string, BotSecret>>();
  private generation = 0;

  constructor(private readonly db: Database) {}

  /** Subscribes to invalidations. */
  async start(): Promise<void> {
    await this.db.listen(BOT_CHANGED, (id) => this.dropBot(id));
    await this.db.listen(SECRETS_CHANGED, (projectId) => this.dropSecrets(projectId));
    this.db.onReset(() => this.clear());
  }

  clear(): void {
    this.generation++;
    this.bots.clear();
    this.identifiers.clear();
    this.secrets.clear();
  }

  /** Drops a bot now (this instance); other instances drop it on NOTIFY. */
  dropBot(id: string): void {
    this.generation++;
    this.bots.delete(id);
    for (const [k, v] of this.identifiers) if (v === id) this.identifiers.delete(k);
  }

  /** Drops a project's secrets now (this instance); other instances drop them on NOTIFY. */
  dropSecrets(projectId: string): void {
    this.generation++;
    this.secrets.delete(projectId);
  }

  /** The bot with this id (any project; the caller checks the project), or null. */
  async bot(id: string): Promise<DeployedBot | null> {
    const hit = this.db.listening ? this.bots.get(id) : undefined;
    if (hit) return hit;
    const gen = this.generation;
    const row = await this.db.prisma.bot.findUnique({
      where: { id },
      select: {
        id: true,
        projectId: true,
        name: true,
        versionId: true,
        compiledCode: true,
        timeoutMs: true,
        memoryMb: true,
      },
    });
    if (row && gen === this.generation && this.db.listening) {
      if (this.bots.size >= MAX_ENTRIES) this.bots.clear();
      this.bots.set(id, row);
    }
    return row;
  }

  /** The id of the bot with this identifier in a project, or null. */
  async botIdByIdentifier(projectId: string, system: string, value: string): Promise<string | null> {
    const key = `${projectId}\u0000${system}\u0000${value}`;
    const hit = this.db.listening ? this.identifiers.get(key) : undefined;
    if (hit) return hit;
    const gen = this.generation;
    const row = await this.db.prisma.botIdentifier.findUnique({
      where: { projectId_system_value: { projectId, system, value } },
      select: { botId: true },
    });
    if (row && gen === this.generation && this.db.listening) {
      if (this.identifiers.size >= MAX_ENTRIES) this.identifiers.clear();
      this.identifiers.set(key, row.botId);
    }
    return row?.botId ?? null;
  }

  /** A project's secrets by name. */
  async projectSecrets(projectId: string): Promise<Record<string, BotSecret>> {
    const hit = this.db.listening ? this.secrets.get(projectId) : undefined;
    if (hit) return hit;
    const gen = this.generation;
    const rows = await this.db.prisma.projectSecret.findMany({ where: { projectId } });
    const out: Record<string, BotSecret> = {};
    for (const r of rows) out[r.name] = { name: r.name, valueString: r.value };
    if (gen === this.generation && this.db.listening) {
      if (this.secrets.size >= MAX_ENTRIES) this.secrets.clear();
      this.secrets.set(projectId, out);
    }
    return out;
  }
}
