// The Bot resource store ([base]/Bot CRUD and search), project-scoped. Code is compiled when written (a compile
// error is a 400 naming line:column); identifiers are unique per project (409), written in the same statement as
// the bot so no half-written record exists. Every change notifies bot_changed so all instances drop their cache.
import { ApiError, badRequest, conflict, forbidden, notFound } from '../core/errors.js';
import type { Caller } from '../core/caller.js';
import { isFhirId } from '../fhir/registry.js';
import type { FhirResource, ResourceStore, SearchParams } from '../fhir/types.js';
import { parseIdentifierToken } from '../fhir/types.js';
import type { Database } from '../db/database.js';
import { BOT_CHANGED, type BotCache } from './cache.js';
import { compileSource } from './engine.js';

export const DEFAULT_TIMEOUT_SEC = 10;
export const MAX_TIMEOUT_SEC = 900;
export const DEFAULT_MEMORY_MB = 64;
export const MIN_MEMORY_MB = 8;
export const MAX_MEMORY_MB = 1024;

interface BotRow {
  id: string;
  projectId: string;
  resource: unknown;
  code: string | null;
  timeoutMs: number;
  memoryMb: number;
  versionId: number;
  updatedAt: Date;
}

interface ParsedBot {
  name: string | null;
  description: string | null;
  identifiers: Array<{ system: string; value: string }>;
  code: string | undefined;
  timeoutMs: number;
  memoryMb: number;
  /** The resource as stored (without id/meta/code). */
  stored: Record<string, unknown>;
}

function optString(r: FhirResource, key: string): string | null {
  const v = r[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw badRequest(`Bot.${key} must be a string`, [key]);
  return v;
}

function intInRange(v: unknown, key: string, min: number, max: number, def: number): number {
  if (v === undefined || v === null) return def;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw badRequest(`Bot.${key} must be an integer between ${min} and ${max}`, [key]);
  return v;
}

/** Validates a Bot resource body and extracts its columns. */
function parseBot(r: FhirResource): ParsedBot {
  const name = optString(r, 'name');
  const description = optString(r, 'description');
  const code = r.code;
  if (code !== undefined && code !== null && typeof code !== 'string')
    throw badRequest('Bot.code must be a string of JavaScript or TypeScript', ['code']);
  const identifiers: Array<{ system: string; value: string }> = [];
  if (r.identifier !== undefined) {
    if (!Array.isArray(r.identifier)) throw badRequest('Bot.identifier must be an array', ['identifier']);
    const seen = new Set<string>();
    r.identifier.forEach((raw: unknown, i: number) => {
      const idf = raw as { system?: unknown; value?: unknown } | null;
      if (!idf || typeof idf !== 'object' || typeof idf.value !== 'string' || idf.value === '')
        throw badRequest(`Bot.identifier[${i}].value must be a non-empty string`, [`identifier[${i}]`]);
      if (idf.system !== undefined && typeof idf.system !== 'string')
        throw badRequest(`Bot.identifier[${i}].system must be a string`, [`identifier[${i}]`]);
      const system = (idf.system as string | undefined) ?? '';
      const key = `${system}|${idf.value}`;
      if (seen.has(key)) throw badRequest(`Bot.identifier ${key} is listed twice`, [`identifier[${i}]`]);
      seen.add(key);
      identifiers.push({ system, value: idf.value });
    });
  }
  const timeoutSec = intInRange(r.timeout, 'timeout', 1, MAX_TIMEOUT_SEC, DEFAULT_TIMEOUT_SEC);
  const memoryMb = intInRange(r.memoryLimit, 'memoryLimit', MIN_MEMORY_MB, MAX_MEMORY_MB, DEFAULT_MEMORY_MB);
  const stored: Record<string, unknown> = { ...r };
  delete stored.id;
  delete stored.meta;
  delete stored.code;
  stored.timeout = timeoutSec;
  stored.memoryLimit = memoryMb;
  return {
    name,
    description,
    identifiers,
    code: typeof code === 'string' ? code : undefined,
    timeoutMs: timeoutSec * 1000,
    memoryMb,
    stored,
  };
}

/** The FHIR JSON of a stored bot. */
export function botResource(row: BotRow): FhirResource {
  const stored = (row.resource ?? {}) as Record<string, unknown>;
  return {
    ...stored,
    resourceType: 'Bot',
    id: row.id,
    meta: { versionId: String(row.versionId), lastUpdated: row.updatedAt.toISOString() },
    ...(row.code !== null ? { code: row.code } : {}),
  };
}

/**
 * Checks the caller may write bot code: a project admin. Bot code receives the project's secrets and runs for
 * every caller, so writing it is an admin power (members may read and execute bots).
 */
function requireBotAdmin(caller: Caller, action: string): void {
  if (!caller.admin)
    throw forbidden(`Only a project admin can ${action} bots (bot code sees the project secrets)`);
}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  return e?.code === 'P2002' || /unique constraint/i.test(e?.message ?? '');
}

/** Bot CRUD for the FHIR registry. */
export class BotStore implements ResourceStore {
  constructor(
    private readonly db: Database,
    private readonly cache: BotCache,
  ) {}

  private async changed(id: string): Promise<void> {
    // NOTIFY reaches this instance asynchronously: drop the local copy now so the caller's next request sees it.
    this.cache.dropBot(id);
    await this.db.notify(BOT_CHANGED, id);
  }

  private async load(projectId: string, id: string): Promise<BotRow> {
    if (!isFhirId(id)) throw notFound(`Bot/${id} not found`);
    const row = /^[0-9a-f-]{36}$/i.test(id)
      ? await this.db.prisma.bot.findFirst({ where: { id, projectId } })
      : null;
    if (!row) throw notFound(`Bot/${id} not found`);
    return row;
  }

  async create(caller: Caller, resource: FhirResource): Promise<FhirResource> {
    requireBotAdmin(caller, 'create');
    const b = parseBot(resource);
    const compiledCode = b.code !== undefined ? await compileSource(b.code) : null;
    try {
      const row = await this.db.prisma.bot.create({
        data: {
          projectId: caller.projectId,
          name: b.name,
          description: b.description,
          resource: b.stored as object,
          code: b.code ?? null,
          compiledCode,
          timeoutMs: b.timeoutMs,
          memoryMb: b.memoryMb,
          identifiers: { create: b.identifiers.map((i) => ({ ...i, projectId: caller.projectId })) },
        },
      });
      return botResource(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateIdentifier(b.identifiers);
      throw err;
    }
  }

  async read(caller: Caller, id: string): Promise<FhirResource> {
    return botResource(await this.load(caller.projectId, id));
  }

  async update(caller: Caller, id: string, resource: FhirResource): Promise<FhirResource> {
    requireBotAdmin(caller, 'update');
    const existing = await this.load(caller.projectId, id);
    const b = parseBot(resource);
    // An update without `code` keeps the deployed code (Medplum deploys code separately with $deploy).
    const code = b.code !== undefined ? b.code : existing.code;
    const compiledCode = b.code !== undefined ? await compileSource(b.code) : undefined;
    try {
      const row = await this.db.prisma.bot.update({
        where: { id: existing.id },
        data: {
          name: b.name,
          description: b.description,
          resource: b.stored as object,
          code,
          ...(compiledCode !== undefined ? { compiledCode } : {}),
          timeoutMs: b.timeoutMs,
          memoryMb: b.memoryMb,
          versionId: { increment: 1 },
          identifiers: {
            deleteMany: {},
            create: b.identifiers.map((i) => ({ ...i, projectId: caller.projectId })),
          },
        },
      });
      await this.changed(row.id);
      return botResource(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateIdentifier(b.identifiers);
      throw err;
    }
  }

  /** Replaces a bot's code (the $deploy operation). */
  async deploy(caller: Caller, id: string, code: string): Promise<FhirResource> {
    requireBotAdmin(caller, 'deploy');
    const existing = await this.load(caller.projectId, id);
    const compiledCode = await compileSource(code);
    const row = await this.db.prisma.bot.update({
      where: { id: existing.id },
      data: { code, compiledCode, versionId: { increment: 1 } },
    });
    await this.changed(row.id);
    return botResource(row);
  }

  async delete(caller: Caller, id: string): Promise<void> {
    requireBotAdmin(caller, 'delete');
    const existing = await this.load(caller.projectId, id);
    await this.db.prisma.bot.delete({ where: { id: existing.id } });
    await this.changed(existing.id);
  }

  async search(caller: Caller, params: SearchParams): Promise<{ resources: FhirResource[]; total: number }> {
    // Bots have no canonical url or version: such a search matches nothing.
    if (params.url !== undefined || params.version !== undefined) return { resources: [], total: 0 };
    const where: NonNullable<Parameters<Database['prisma']['bot']['findMany']>[0]>['where'] = {
      projectId: caller.projectId,
    };
    if (params.name !== undefined) where.name = { startsWith: params.name, mode: 'insensitive' };
    if (params.identifier !== undefined) {
      const { system, value } = parseIdentifierToken(params.identifier);
      where.identifiers = {
        some: {
          ...(system !== undefined ? { system } : {}),
          ...(value !== undefined ? { value } : {}),
        },
      };
    }
    const [rows, total] = await Promise.all([
      this.db.prisma.bot.findMany({
        where,
        orderBy: { createdAt: 'asc' },
        take: params.count,
        skip: params.offset,
      }),
      this.db.prisma.bot.count({ where }),
    ]);
    return { resources: rows.map(botResource), total };
  }
}

function duplicateIdentifier(ids: Array<{ system: string; value: string }>): ApiError {
  const list = ids.map((i) => (i.system ? `${i.system}|${i.value}` : i.value)).join(', ');
  return conflict(`Another Bot in this project already has identifier ${list}`);
}
