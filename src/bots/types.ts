// Shapes shared by the bot modules: the cached deployable bot, an execution request and its HTTP-ready result.
import type { Principal } from '../core/caller.js';

/** What an execution needs to know about a bot (cached in memory, invalidated by NOTIFY bot_changed). */
export interface DeployedBot {
  id: string;
  projectId: string;
  name: string | null;
  versionId: number;
  compiledCode: string | null;
  timeoutMs: number;
  memoryMb: number;
}

/** One execution request, already parsed from HTTP (or from a bot's medplum.executeBot call). */
export interface ExecuteRequest {
  id?: string | null;
  /** `system|value` (or `value`), looked up in the caller's project. */
  identifier?: string | null;
  /** The media type without parameters, lower-case. */
  contentType: string;
  /** The request body as text (POST) or a JSON object of query parameters (GET). */
  body?: string | null;
  query?: Record<string, string> | null;
  /** Request headers to hand to the bot (Authorization and Cookie removed). */
  headers?: Record<string, string>;
  /** For a job: which run this is (1, or more when re-run after its instance died); the bot sees event.attempt. */
  attempt?: number;
}

/** An execution's outcome, in HTTP terms. */
export interface BotResult {
  status: number;
  contentType: string;
  body: string;
  headers: Record<string, string>;
  /** success | error | timeout | memory | output-too-large */
  outcome: string;
}

/** What one execution reaches beyond its isolate, built for its caller by the GraphQL side (graphql-medplum.ts):
 * the bot's `medplum` argument, and the execution budget of the incoming request it belongs to. */
export interface ExecutionHost {
  /** Host functions acting as the caller (read, search, create, ... , executeBot, valueSetExpand). */
  medplum: Record<string, (...args: unknown[]) => Promise<unknown>>;
  /** Counts one more execution for the incoming request; returns how many it has run, this one included. */
  countExecution(): number;
}

/** What an async job remembers about its caller so any instance can run it later. */
export interface JobRequest {
  principal: Principal;
  request: ExecuteRequest;
  traceId: string;
}
