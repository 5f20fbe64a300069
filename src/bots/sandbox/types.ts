// The sandbox's public shapes (options, requests, results) and its options with their defaults filled in.
import type { FetchPolicy } from './fetch-policy.js';

export const HL7_CONTENT_TYPE = 'x-application/hl7-v2+er7';

export interface SandboxOptions {
  /** Maximum warm isolates kept (LRU). Busy isolates are never evicted, so this is a soft cap. Default 32. */
  maxIsolates?: number;
  /** Idle isolates are disposed after this long. Default 300000 (5 min). */
  idleTimeoutMs?: number;
  /** Upper bound for a request's timeoutMs. Default 900000 (15 min). */
  maxTimeoutMs?: number;
  /** Upper bound for a request's memoryMb (lower bound is always 8). Default 1024. */
  maxMemoryMb?: number;
  /** Log capture limit per execution in bytes (UTF-8). Default 65536. */
  logLimitBytes?: number;
  /** Maximum size of the returned value (serialized, UTF-8 bytes). Default 10 MiB. */
  maxOutputBytes?: number;
  /** Outbound fetch policy. */
  fetch?: FetchPolicy;
  /** Trusted scripts run in every context before bot code (e.g. the HL7 library defining globalThis.Hl7Message). */
  preludes?: string[];
  /** Give every execution a new V8 context (no state at all between executions). Default false. */
  contextPerExecution?: boolean;
  /** Max medplum bridge calls + fetches per execution. Default 1000. */
  maxHostCallsPerExecution?: number;
  /** Max concurrently running medplum bridge calls + fetches per execution (more wait in a queue). Default 16. */
  maxConcurrentHostCalls?: number;
  /** Max characters of JSON one execution's host calls may move, arguments and results together (counted as each
   * arrives, before it is parsed; over it the call is refused inside the bot). Default 64 MiB. */
  maxHostBytesPerExecution?: number;
  /** Host calls of one project's executions running at once (more wait in a queue). Default 32. */
  projectMaxHostCalls?: number;
  /** Writes (the `writeMethods`) per second one project's bots may make; a write waits up to 1 s for its turn,
   * beyond that it is refused. Default 20. */
  projectWritesPerSecond?: number;
  /** The host functions that write. Default createResource, updateResource, deleteResource. */
  writeMethods?: string[];
  /** Host calls with arguments longer than this (characters) are large: parsed in steps, one at a time per
   * execution, each holding a `largeCall` place. Default 1 MiB. */
  largeCallChars?: number;
  /** Takes a place for a large host call of `projectId` (the server's large-request budget) or throws an Error
   * whose message the bot sees; returns the place's release. Default: no such budget. */
  largeCall?: (projectId: string) => () => void;
  /** Deepest nesting of a host call's JSON arguments parsed in steps. Default 256. */
  jsonMaxDepth?: number;
  /** Max pending setTimeout/setInterval timers per execution. Default 1000. */
  maxTimers?: number;
  /** Server-wide share of executions and isolate memory (see ExecutionBudget). Default: unlimited. */
  budget?: Partial<ExecutionBudget>;
}

/**
 * Limits shared by all bots of one sandbox. Memory is counted as the `memoryMb` each live isolate may grow to (its
 * heap limit), from its creation until it is disposed, warm or busy. Over a limit an execution is refused at once
 * (ExecutionResult error 'busy'); idle warm isolates are disposed first to make room.
 */
export interface ExecutionBudget {
  /** Executions running at once, all projects. */
  maxConcurrent: number;
  /** Executions running at once in one project. */
  projectMaxConcurrent: number;
  /** MB of isolate heap limits, all projects. */
  memoryMb: number;
  /** MB of isolate heap limits of one project. */
  projectMemoryMb: number;
}

export type HostFunction = (...args: unknown[]) => Promise<unknown>;

/** JSON text already checked (a request body parsed in steps), handed to the bot as the value it holds: spliced
 * into the execution's payload as it is, instead of being serialised again in one synchronous stretch. */
export class JsonText {
  constructor(readonly text: string) {}

  /** Anywhere else it is serialised, it is the value it holds. */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

export interface BotEvent {
  bot: unknown;
  contentType: string;
  /** JSON-able input (or JsonText); for HL7 (contentType x-application/hl7-v2+er7) pass { hl7: string }:
   * re-parsed inside. */
  input: unknown;
  secrets: Record<string, unknown>;
  traceId: string;
  requester: unknown;
  headers: Record<string, string>;
  /** Async jobs: the run number (1 first; more when re-run after the instance running it died). */
  attempt?: number;
}

export interface ExecuteRequest {
  projectId: string;
  botId: string;
  /** Cache key of the code: the warm isolate is reused while projectId, botId, codeVersion and memoryMb match. */
  codeVersion: string;
  /** Output of BotSandbox.compile (CommonJS). */
  compiledCode: string;
  timeoutMs: number;
  memoryMb: number;
  event: BotEvent;
  /** Host functions exposed as methods of the bot's `medplum` client. JSON in, JSON out. */
  medplum: Record<string, HostFunction>;
  /** Name used in bot stack traces. Default `bot.js`. */
  filename?: string;
}

export type ResponseBody =
  { type: 'empty' } | { type: 'text'; text: string } | { type: 'json'; json: unknown };

export type BotValue =
  | { kind: 'undefined' }
  | { kind: 'string'; text: string }
  | { kind: 'json'; json: unknown }
  | { kind: 'hl7'; text: string }
  | {
      kind: 'response';
      status: number;
      contentType?: string;
      headers: Record<string, string>;
      body: ResponseBody;
    };

export type ExecutionErrorKind = 'error' | 'timeout' | 'memory' | 'output-too-large' | 'busy';

/** What an execution's host calls (`medplum.*`, fetch) cost, and the first budget that refused one. */
export interface HostUsage {
  calls: number;
  /** Characters of JSON moved: arguments (refused calls' included) and results. */
  bytes: number;
  /** The first refusal's message (it names the budget and its setting). */
  refused?: string;
}

export type ExecutionResult =
  | { ok: true; value: BotValue; logs: string; durationMs: number; host?: HostUsage }
  | {
      ok: false;
      error: ExecutionErrorKind;
      message: string;
      logs: string;
      durationMs: number;
      /** For 'busy': whose share is spent (the project's, or the whole server's). */
      scope?: 'project' | 'server';
      /** Absent when the execution never started (refused, or not serializable). */
      host?: HostUsage;
    };

/** A refusal because a share of the budget is spent. */
export type BusyError = { ok: false; error: 'busy'; message: string; scope: 'project' | 'server' };

/** The options with every default filled in. */
export type ResolvedOptions = Required<Omit<SandboxOptions, 'fetch' | 'budget' | 'largeCall'>> & {
  largeCall?: SandboxOptions['largeCall'];
  fetch: Required<FetchPolicy>;
  budget: ExecutionBudget;
};

/** Fills in the defaults of the options. */
export function resolveOptions(opts: SandboxOptions): ResolvedOptions {
  return {
    maxIsolates: opts.maxIsolates ?? 32,
    idleTimeoutMs: opts.idleTimeoutMs ?? 300_000,
    maxTimeoutMs: opts.maxTimeoutMs ?? 900_000,
    maxMemoryMb: opts.maxMemoryMb ?? 1024,
    logLimitBytes: opts.logLimitBytes ?? 65_536,
    maxOutputBytes: opts.maxOutputBytes ?? 10 * 1024 * 1024,
    preludes: opts.preludes ?? [],
    contextPerExecution: opts.contextPerExecution ?? false,
    maxHostCallsPerExecution: opts.maxHostCallsPerExecution ?? 1000,
    maxConcurrentHostCalls: opts.maxConcurrentHostCalls ?? 16,
    maxHostBytesPerExecution: opts.maxHostBytesPerExecution ?? 64 * 1024 * 1024,
    projectMaxHostCalls: opts.projectMaxHostCalls ?? 32,
    projectWritesPerSecond: opts.projectWritesPerSecond ?? 20,
    writeMethods: opts.writeMethods ?? ['createResource', 'updateResource', 'deleteResource'],
    largeCallChars: opts.largeCallChars ?? 1024 * 1024,
    largeCall: opts.largeCall,
    jsonMaxDepth: opts.jsonMaxDepth ?? 256,
    maxTimers: opts.maxTimers ?? 1000,
    budget: {
      maxConcurrent: opts.budget?.maxConcurrent ?? Infinity,
      projectMaxConcurrent: opts.budget?.projectMaxConcurrent ?? Infinity,
      memoryMb: opts.budget?.memoryMb ?? Infinity,
      projectMemoryMb: opts.budget?.projectMemoryMb ?? Infinity,
    },
    fetch: {
      allowPrivate: opts.fetch?.allowPrivate ?? false,
      enabled: opts.fetch?.enabled ?? true,
      maxResponseBytes: opts.fetch?.maxResponseBytes ?? 10 * 1024 * 1024,
      maxRequestBytes: opts.fetch?.maxRequestBytes ?? 10 * 1024 * 1024,
      maxRedirects: opts.fetch?.maxRedirects ?? 5,
    },
  };
}
