// The seam between the bot service and the isolated-vm sandbox (src/bots/sandbox, owned separately): compiling at
// deploy with client-facing errors, and building the one sandbox per server instance with the HL7 prelude.
import { badRequest } from '../core/errors.js';
import { BotSandbox, CompileError } from './sandbox/index.js';
import { hl7IsolateSource } from './hl7/bundle.js';
import type { Config } from '../config.js';
import { LARGE_BODY_BYTES, type LargeRequests } from '../fhir/large-requests.js';

/** Compiles bot source to the CommonJS the sandbox runs; a syntax error is a 400 naming line:column. */
export async function compileSource(code: string): Promise<string> {
  try {
    return await BotSandbox.compile(code, 'bot.ts');
  } catch (err) {
    if (err instanceof CompileError) {
      throw badRequest(`Bot code does not compile: line ${err.line}, column ${err.column}: ${err.message}`, [
        'code',
      ]);
    }
    throw err;
  }
}

/** The sandbox for one server instance, with the HL7 library preloaded into every isolate; a bot's host call with
 * arguments as large as a large request body holds a place of the server's large-request budget (`large`). */
export async function createSandbox(config: Config, large?: LargeRequests): Promise<BotSandbox> {
  return new BotSandbox({
    preludes: [await hl7IsolateSource()],
    fetch: { allowPrivate: config.botFetchAllowPrivate },
    logLimitBytes: config.botLogLimit,
    maxHostCallsPerExecution: config.botHostCallsPerExecution,
    maxHostBytesPerExecution: config.botHostBytesPerExecution,
    projectMaxHostCalls: config.botProjectHostCalls,
    projectWritesPerSecond: config.botProjectWritesPerSecond,
    largeCallChars: LARGE_BODY_BYTES,
    largeCall: large
      ? (projectId) => large.acquire(projectId, "a bot's medplum call with more than 1 MiB of arguments")
      : undefined,
    jsonMaxDepth: config.jsonMaxDepth,
    budget: {
      maxConcurrent: config.botMaxConcurrent,
      projectMaxConcurrent: config.botProjectMaxConcurrent,
      memoryMb: config.botMemoryBudgetMb,
      projectMemoryMb: config.botProjectMemoryMb,
    },
  });
}
