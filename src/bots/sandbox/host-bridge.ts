// The host side of what bot code may ask for: console lines, `medplum` calls, fetch and timers. Each is an
// isolated-vm callback or reference handed to the bot runtime once per context; every call names its execution by
// id and is checked against the isolate's live executions (an ended execution's calls are refused), then run under
// the execution's call budget and concurrency limit. Data crosses as strings (JSON) only.
import ivm from './isolated-vm.js';
import { performance } from 'node:perf_hooks';
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

  /** Runs fn under the execution's host-call budget and concurrency limit. */
  private async budgeted(exec: ExecState, fn: () => Promise<string>): Promise<string> {
    if (++exec.hostCalls > this.opts.maxHostCallsPerExecution) {
      return fail(
        `Too many medplum/fetch calls in one execution (limit ${this.opts.maxHostCallsPerExecution})`,
      );
    }
    if (exec.running >= this.opts.maxConcurrentHostCalls) {
      await new Promise<void>((resolve) => exec.queue.push(resolve));
    }
    if (exec.done) return fail('The bot execution has finished');
    exec.running++;
    try {
      return await fn();
    } finally {
      exec.running--;
      exec.queue.shift()?.();
    }
  }

  private async onHostCall(id: unknown, name: unknown, argsJson: unknown): Promise<string> {
    const exec = this.live(id);
    if (!exec) return fail('The bot execution has finished');
    if (typeof name !== 'string' || !Object.hasOwn(exec.medplum, name) || typeof argsJson !== 'string') {
      return fail(`medplum.${String(name)} is not available`);
    }
    return this.budgeted(exec, async () => {
      try {
        const args: unknown = JSON.parse(argsJson);
        const value = await exec.medplum[name](...(Array.isArray(args) ? args : []));
        if (exec.done) return fail('The bot execution has finished');
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
    if (!exec) return fail('The bot execution has finished');
    if (typeof reqJson !== 'string') return fail('fetch: invalid request');
    return this.budgeted(exec, async () => {
      try {
        const parsed = JSON.parse(reqJson) as Partial<BridgedFetchRequest>;
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

/** A failed host call, as the bot runtime reads it. */
function fail(message: string): string {
  return JSON.stringify({ ok: false, message });
}
