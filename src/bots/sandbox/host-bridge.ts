// The host side of what bot code may ask for: console lines, `medplum` calls, fetch and timers. Each is an
// isolated-vm callback or reference handed to the bot runtime once per context; every call names its execution by
// id and is checked against the isolate's live executions (an ended execution's calls are refused), then run under
// the execution's budgets (calls, characters of JSON moved, calls at once) and its project's (calls in flight,
// writes per second); a large call (arguments over largeCallChars) is parsed in steps, one at a time per execution,
// holding a place of the server's large-request budget. A refusal reaches the bot as an Error naming the budget
// and its setting, and is kept for the execution record. Data crosses as strings (JSON) only.
import ivm from './isolated-vm.js';
import { performance } from 'node:perf_hooks';
import { parseJsonInSteps } from '../../core/json-in-steps.js';
import { yieldIfHeld } from '../../core/turns.js';
import { policyFetch, type BridgedFetchRequest } from './fetch-policy.js';
import type { ExecState, Sleep } from './execution.js';
import { HEADER_NAME, HEADER_VALUE } from './headers.js';
import type { ResolvedOptions } from './types.js';

/** The host functions of one isolate, for its executions. */
export class HostBridge {
  private readonly hostLog: ivm.Callback;
  private readonly hostCall: ivm.Reference;
  private readonly hostFetch: ivm.Reference;
  private readonly hostSleep: ivm.Reference;

  constructor(
    private readonly executions: ReadonlyMap<number, ExecState>,
    private readonly opts: ResolvedOptions,
    private readonly projectId: string,
  ) {
    this.hostLog = new ivm.Callback(
      (id: unknown, line: unknown, truncated: unknown) => {
        const exec = this.live(id);
        if (exec && typeof line === 'string') exec.logs.append(line, truncated === true);
      },
      { ignored: true },
    );
    this.hostCall = new ivm.Reference((id: unknown, name: unknown, argsJson: unknown) =>
      this.onHostCall(id, name, argsJson),
    );
    this.hostFetch = new ivm.Reference((id: unknown, reqJson: unknown) => this.onFetch(id, reqJson));
    this.hostSleep = new ivm.Reference((id: unknown, ms: unknown) => this.onSleep(id, ms));
  }

  /** The arguments the bot runtime's init takes first: log, call, fetch, sleep. */
  handles(): [ivm.Callback, ivm.Reference, ivm.Reference, ivm.Reference] {
    return [this.hostLog, this.hostCall, this.hostFetch, this.hostSleep];
  }

  private live(id: unknown): ExecState | undefined {
    const exec = typeof id === 'number' ? this.executions.get(id) : undefined;
    return exec && !exec.done ? exec : undefined;
  }

  /** Runs fn under the execution's and its project's host-call budgets; `chars` is the length of the call's JSON
   * arguments, counted before anything else is done with them. */
  private async budgeted(
    exec: ExecState,
    chars: number,
    kind: { write: boolean },
    fn: () => Promise<string>,
  ): Promise<string> {
    const o = this.opts;
    if (++exec.hostCalls > o.maxHostCallsPerExecution)
      return refuse(
        exec,
        `Too many medplum/fetch calls in one execution (limit ${o.maxHostCallsPerExecution}, ` +
          'BOT_HOST_CALLS_PER_EXECUTION)',
      );
    exec.hostBytes += chars;
    if (exec.hostBytes > o.maxHostBytesPerExecution)
      return refuse(exec, bytesSpent(o.maxHostBytesPerExecution));
    if (exec.running >= o.maxConcurrentHostCalls) {
      await new Promise<void>((resolve) => exec.queue.push(resolve));
    }
    if (exec.done) return fail(FINISHED);
    exec.running++;
    const large = chars > o.largeCallChars;
    let inLane = false;
    let leave: (() => void) | undefined;
    let releaseSlot: (() => void) | undefined;
    try {
      if (large) {
        // One large call at a time per execution: its 16 loops cannot hold 16 large documents at once.
        if (exec.largeBusy) await new Promise<void>((resolve) => exec.largeQueue.push(resolve));
        exec.largeBusy = true;
        inLane = true;
        if (exec.done) return fail(FINISHED);
      }
      leave = await exec.project.enter();
      if (exec.done) return fail(FINISHED);
      if (kind.write && !(await exec.project.takeWrite(exec.deadline)))
        return refuse(
          exec,
          `Too many writes: this project's bots may write ${o.projectWritesPerSecond} resources per second ` +
            '(BOT_PROJECT_WRITES_PER_SECOND); retry shortly',
        );
      if (exec.done) return fail(FINISHED);
      if (large && o.largeCall) {
        try {
          releaseSlot = o.largeCall(this.projectId);
        } catch (err) {
          return refuse(exec, err instanceof Error ? err.message : String(err));
        }
      }
      // Many calls at once (16 loops, several executions) would otherwise run back to back in one stretch of
      // microtasks: each starts and ends with a turn for the rest of the server when the loop has been held.
      await yieldIfHeld();
      const out = await fn();
      exec.hostBytes += out.length;
      await yieldIfHeld();
      return out;
    } finally {
      releaseSlot?.();
      leave?.();
      if (inLane) {
        const next = exec.largeQueue.shift();
        if (next) next();
        else exec.largeBusy = false;
      }
      exec.running--;
      exec.queue.shift()?.();
    }
  }

  /** A call's JSON arguments: parsed in steps (the event loop getting turns) when large. */
  private parseArgs(json: string, what: string): unknown {
    if (json.length <= this.opts.largeCallChars) return JSON.parse(json);
    const depth = this.opts.jsonMaxDepth;
    return parseJsonInSteps(Buffer.from(json, 'utf8'), depth, {
      tooDeep: () =>
        new Error(`${what}: arguments nested deeper than the limit of ${depth} (JSON_MAX_DEPTH)`),
    });
  }

  private async onHostCall(id: unknown, name: unknown, argsJson: unknown): Promise<string> {
    const exec = this.live(id);
    if (!exec) return fail(FINISHED);
    if (typeof name !== 'string' || !Object.hasOwn(exec.medplum, name) || typeof argsJson !== 'string') {
      return fail(`medplum.${String(name)} is not available`);
    }
    const write = this.opts.writeMethods.includes(name);
    return this.budgeted(exec, argsJson.length, { write }, async () => {
      try {
        const args: unknown = await this.parseArgs(argsJson, `medplum.${name}`);
        const value = await exec.medplum[name](...(Array.isArray(args) ? args : []));
        if (exec.done) return fail(FINISHED);
        const json = value === undefined ? undefined : JSON.stringify(value);
        return json === undefined ? '{"ok":true}' : `{"ok":true,"value":${json}}`;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        const outcome = (err as { outcome?: unknown } | null)?.outcome;
        let outcomeJson: string | undefined;
        try {
          outcomeJson = outcome && typeof outcome === 'object' ? JSON.stringify(outcome) : undefined;
        } catch {
          outcomeJson = undefined;
        }
        return outcomeJson
          ? `{"ok":false,"message":${JSON.stringify(message)},"outcome":${outcomeJson}}`
          : fail(message);
      }
    });
  }

  private async onFetch(id: unknown, reqJson: unknown): Promise<string> {
    const exec = this.live(id);
    if (!exec) return fail(FINISHED);
    if (typeof reqJson !== 'string') return fail('fetch: invalid request');
    return this.budgeted(exec, reqJson.length, { write: false }, async () => {
      try {
        const parsed = (await this.parseArgs(reqJson, 'fetch')) as Partial<BridgedFetchRequest>;
        const req: BridgedFetchRequest = {
          url: String(parsed.url),
          method: typeof parsed.method === 'string' && /^[A-Z]+$/.test(parsed.method) ? parsed.method : 'GET',
          headers: Array.isArray(parsed.headers)
            ? parsed.headers
                .filter(
                  (h) =>
                    Array.isArray(h) && HEADER_NAME.test(String(h[0])) && HEADER_VALUE.test(String(h[1])),
                )
                .map((h) => [String(h[0]), String(h[1])] as [string, string])
            : [],
          body: typeof parsed.body === 'string' ? parsed.body : undefined,
          redirect: parsed.redirect === 'manual' || parsed.redirect === 'error' ? parsed.redirect : 'follow',
        };
        const remaining = exec.deadline - performance.now();
        const signal = AbortSignal.any([
          (exec.abort ??= new AbortController()).signal,
          AbortSignal.timeout(Math.max(1, Math.ceil(remaining))),
        ]);
        const response = await policyFetch(req, this.opts.fetch, signal);
        return JSON.stringify({ ok: true, response });
      } catch (err) {
        return fail(err instanceof Error && err.name === 'FetchRefusedError' ? err.message : 'fetch failed');
      }
    });
  }

  private onSleep(id: unknown, ms: unknown): Promise<boolean> {
    const exec = this.live(id);
    if (!exec) return Promise.resolve(false);
    const delay = typeof ms === 'number' && ms > 0 ? ms : 0;
    return new Promise<boolean>((resolve) => {
      const sleep: Sleep = { resolve };
      // A timer that would fire after the deadline never fires: the deadline ends the execution first.
      if (performance.now() + delay < exec.deadline) {
        sleep.timer = setTimeout(() => {
          exec.sleeps.delete(sleep);
          resolve(!exec.done);
        }, delay);
      }
      exec.sleeps.add(sleep);
    });
  }
}

const FINISHED = 'The bot execution has finished';

/** A failed host call, as the bot runtime reads it. */
function fail(message: string): string {
  return JSON.stringify({ ok: false, message });
}

/** A host call refused by a budget: failed, and the first such refusal kept for the execution record. */
function refuse(exec: ExecState, message: string): string {
  exec.refused ??= message;
  return fail(message);
}

/** The refusal once an execution's host calls have moved more than their budget. */
function bytesSpent(max: number): string {
  return (
    `This execution's medplum/fetch calls have moved more than ${max} bytes of JSON, its budget ` +
    '(BOT_HOST_BYTES_PER_EXECUTION)'
  );
}
