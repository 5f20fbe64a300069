// The budgets of bots' host calls (medplum.*, fetch), in a real sandbox: per execution (calls, characters of JSON
// moved), per project (calls in flight, writes per second), and large calls (parsed in steps, one at a time per
// execution, each holding a large-request place). Every refusal reaches the bot as an Error naming its setting and
// is reported in the result's `host`.
import { afterEach, describe, expect, it } from 'vitest';
import {
  BotSandbox,
  type ExecutionResult,
  type HostFunction,
  type SandboxOptions,
} from '../../../src/bots/sandbox/index.js';

const sandboxes: BotSandbox[] = [];
afterEach(() => {
  for (const s of sandboxes.splice(0)) s.dispose();
});

function make(opts: SandboxOptions): BotSandbox {
  const s = new BotSandbox(opts);
  sandboxes.push(s);
  return s;
}

let counter = 0;

async function run(
  sandbox: BotSandbox,
  source: string,
  medplum: Record<string, HostFunction>,
  projectId = 'project-1',
): Promise<ExecutionResult> {
  return sandbox.execute({
    projectId,
    botId: `bot-${++counter}`,
    codeVersion: 'v1',
    compiledCode: await BotSandbox.compile(source, 'bot.ts'),
    timeoutMs: 10_000,
    memoryMb: 64,
    event: {
      bot: {},
      contentType: 'application/json',
      input: {},
      secrets: {},
      traceId: 't',
      requester: {},
      headers: {},
    },
    medplum,
  });
}

/** A host function that counts its calls and how many ran at once. */
function counted(delayMs = 0, value: unknown = 'ok') {
  const c = { calls: 0, running: 0, most: 0, fn: (async () => undefined) as HostFunction };
  c.fn = async () => {
    c.calls++;
    c.most = Math.max(c.most, ++c.running);
    try {
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      return value;
    } finally {
      c.running--;
    }
  };
  return c;
}

/** A bot that calls medplum[name] `n` times, `width` at once, with a string of `chars` characters; it answers how
 * many calls succeeded and the distinct errors. */
const CALLER = (name: string, n: number, width: number, chars: number) => `
export async function handler(medplum) {
  const arg = 'x'.repeat(${chars});
  let ok = 0, next = 0;
  const errors = new Set();
  await Promise.all(Array.from({ length: ${width} }, async () => {
    while (next < ${n}) {
      next++;
      try { await medplum.${name}({ resourceType: 'Basic', text: arg }); ok++; } catch (e) { errors.add(e.message); }
    }
  }));
  return { ok, errors: [...errors] };
}`;

type Answer = { ok: number; errors: string[] };
const answer = (r: ExecutionResult): Answer => {
  if (!r.ok || r.value.kind !== 'json') throw new Error(JSON.stringify(r));
  return r.value.json as Answer;
};

describe('per execution', () => {
  it('refuses calls past BOT_HOST_CALLS_PER_EXECUTION; the host runs none of them', async () => {
    const host = counted();
    const r = await run(make({ maxHostCallsPerExecution: 5 }), CALLER('ping', 8, 1, 1), { ping: host.fn });
    expect(answer(r)).toEqual({
      ok: 5,
      errors: ['Too many medplum/fetch calls in one execution (limit 5, BOT_HOST_CALLS_PER_EXECUTION)'],
    });
    expect(host.calls).toBe(5);
    expect(r.host).toMatchObject({
      calls: 8,
      refused: expect.stringContaining('BOT_HOST_CALLS_PER_EXECUTION'),
    });
  });

  it('counts arguments against BOT_HOST_BYTES_PER_EXECUTION before the host parses or runs them', async () => {
    const host = counted();
    // 16 at once with 3,000 characters each: the budget of 10,000 admits three calls' arguments.
    const r = await run(make({ maxHostBytesPerExecution: 10_000 }), CALLER('ping', 16, 16, 3000), {
      ping: host.fn,
    });
    const a = answer(r);
    expect(a.ok).toBe(3);
    expect(a.errors).toEqual([
      "This execution's medplum/fetch calls have moved more than 10000 bytes of JSON, its budget " +
        '(BOT_HOST_BYTES_PER_EXECUTION)',
    ]);
    expect(host.calls).toBe(3);
    expect(r.host?.calls).toBe(16);
    expect(r.host?.bytes).toBeGreaterThan(16 * 3000);
    expect(r.host?.refused).toMatch(/BOT_HOST_BYTES_PER_EXECUTION/);
  });

  it('counts results too: a large answer spends the budget for the calls after it', async () => {
    const host = counted(0, 'y'.repeat(8000));
    const r = await run(make({ maxHostBytesPerExecution: 10_000 }), CALLER('read', 3, 1, 10), {
      read: host.fn,
    });
    expect(answer(r)).toMatchObject({
      ok: 2,
      errors: [expect.stringMatching(/BOT_HOST_BYTES_PER_EXECUTION/)],
    });
    expect(host.calls).toBe(2);
  });

  it('reports what the host calls cost when no budget refused', async () => {
    const r = await run(make({}), CALLER('ping', 4, 2, 100), { ping: counted().fn });
    expect(answer(r)).toEqual({ ok: 4, errors: [] });
    expect(r.host?.calls).toBe(4);
    expect(r.host?.bytes).toBeGreaterThan(4 * 100);
    expect(r.host?.refused).toBeUndefined();
  });
});

describe('per project', () => {
  it('runs at most BOT_PROJECT_HOST_CALLS of one project at once; another project is not held up', async () => {
    const sandbox = make({ projectMaxHostCalls: 3 });
    const mine = counted(30);
    const theirs = counted(30);
    const results = await Promise.all([
      run(sandbox, CALLER('ping', 12, 8, 1), { ping: mine.fn }, 'project-a'),
      run(sandbox, CALLER('ping', 12, 8, 1), { ping: mine.fn }, 'project-a'),
      run(sandbox, CALLER('ping', 12, 8, 1), { ping: theirs.fn }, 'project-b'),
    ]);
    for (const r of results) expect(answer(r)).toEqual({ ok: 12, errors: [] });
    // Two executions of 8 loops each: without the project's cap 16 would run at once.
    expect(mine.most).toBe(3);
    expect(mine.calls).toBe(24);
    expect(theirs.most).toBe(3);
  });

  it('paces writes to BOT_PROJECT_WRITES_PER_SECOND and refuses those that would wait over a second', async () => {
    const sandbox = make({ projectWritesPerSecond: 5 });
    const create = counted();
    const read = counted();
    const r = await run(sandbox, CALLER('createResource', 30, 30, 1), {
      createResource: create.fn,
    });
    const a = answer(r);
    // 5 at once (the burst), then one each 200 ms for a second: about 10 of the 30.
    expect(a.ok).toBeGreaterThanOrEqual(5);
    expect(a.ok).toBeLessThanOrEqual(12);
    expect(a.errors).toEqual([
      "Too many writes: this project's bots may write 5 resources per second (BOT_PROJECT_WRITES_PER_SECOND); " +
        'retry shortly',
    ]);
    expect(create.calls).toBe(a.ok);
    // Reads are not writes: none is refused, in the same project at the same time.
    const reads = await run(sandbox, CALLER('readResource', 30, 30, 1), { readResource: read.fn });
    expect(answer(reads)).toEqual({ ok: 30, errors: [] });
  });
});

describe('large calls', () => {
  it('run one at a time per execution, each holding a large-request place, released after', async () => {
    let held = 0;
    let most = 0;
    let taken = 0;
    const sandbox = make({
      largeCallChars: 1000,
      largeCall: () => {
        taken++;
        most = Math.max(most, ++held);
        return () => held--;
      },
    });
    const host = counted(20);
    const r = await run(sandbox, CALLER('ping', 6, 6, 2000), { ping: host.fn });
    expect(answer(r)).toEqual({ ok: 6, errors: [] });
    expect(host.most).toBe(1);
    expect(taken).toBe(6);
    expect(most).toBe(1);
    expect(held).toBe(0);
    // Small calls are not large: they run side by side and take no place.
    const small = counted(20);
    expect(answer(await run(sandbox, CALLER('ping', 6, 6, 10), { ping: small.fn }))).toEqual({
      ok: 6,
      errors: [],
    });
    expect(small.most).toBe(6);
    expect(taken).toBe(6);
  });

  it("refuse with the large-request budget's message when it has no place", async () => {
    const sandbox = make({
      largeCallChars: 1000,
      largeCall: () => {
        throw new Error('Too many large requests at once (LARGE_REQUESTS_PER_PROJECT=2)');
      },
    });
    const host = counted();
    const r = await run(sandbox, CALLER('ping', 1, 1, 2000), { ping: host.fn });
    expect(answer(r)).toEqual({
      ok: 0,
      errors: ['Too many large requests at once (LARGE_REQUESTS_PER_PROJECT=2)'],
    });
    expect(host.calls).toBe(0);
    expect(r.host?.refused).toMatch(/LARGE_REQUESTS_PER_PROJECT/);
  });

  it('are parsed in steps to the same value, within the nesting limit', async () => {
    let seen: unknown;
    const sandbox = make({ largeCallChars: 1000, jsonMaxDepth: 20 });
    const echo: HostFunction = async (v) => {
      seen = v;
      return v;
    };
    const r = await run(
      sandbox,
      `export async function handler(medplum) {
        const doc = { resourceType: 'Basic', list: Array.from({ length: 300 }, (_, i) => ({ i, s: 'v' + i })),
          text: 'z'.repeat(2000), __proto__x: 1 };
        const back = await medplum.echo(doc);
        let deep = {};
        for (let i = 0; i < 30; i++) deep = { d: deep, pad: 'p'.repeat(50) };
        let error = '';
        try { await medplum.echo(deep); } catch (e) { error = e.message; }
        return { same: JSON.stringify(back) === JSON.stringify(doc), error };
      }`,
      { echo },
    );
    expect(r.ok && r.value.kind === 'json' ? r.value.json : r).toEqual({
      same: true,
      error: 'medplum.echo: arguments nested deeper than the limit of 20 (JSON_MAX_DEPTH)',
    });
    expect((seen as { list: unknown[] }).list).toHaveLength(300);
  });
});
