// Bot sandbox: real isolated-vm isolates, no mocks. Every attack listed in src/bots/sandbox/README.md is tried.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BotSandbox,
  CompileError,
  HL7_CONTENT_TYPE,
  isForbiddenAddress,
  isForbiddenHostname,
  JsonText,
  type BotEvent,
  type ExecuteRequest,
  type ExecutionResult,
  type HostFunction,
  type SandboxOptions,
} from '../../../src/bots/sandbox/index.js';
import { ROOT } from '../../helpers/paths.js';

const HL7_PRELUDE = `
globalThis.Hl7Message = class Hl7Message {
  constructor(segments) { this.segments = segments; }
  static parse(text) { return new Hl7Message(text.split(/\\r\\n|\\r|\\n/).filter(Boolean).map((l) => l.split('|'))); }
  getSegment(name) { return this.segments.find((s) => s[0] === name); }
  toString() { return this.segments.map((s) => s.join('|')).join('\\r'); }
};
globalThis.Hl7Segment = class Hl7Segment {};
globalThis.__medplumTest = Object.freeze({ answer: 42 });
`;

function event(overrides: Partial<BotEvent> = {}): BotEvent {
  return {
    bot: { resourceType: 'Bot', id: 'bot-1' },
    contentType: 'application/json',
    input: { hello: 'world' },
    secrets: {},
    traceId: 'trace-1',
    requester: { reference: 'Practitioner/1' },
    headers: {},
    ...overrides,
  };
}

let counter = 0;
const compiled = new Map<string, string>();

async function run(
  sandbox: BotSandbox,
  source: string,
  opts: Partial<Omit<ExecuteRequest, 'event'>> & { event?: Partial<BotEvent> } = {},
): Promise<ExecutionResult> {
  let code = compiled.get(source);
  if (code === undefined) {
    code = await BotSandbox.compile(source, 'bot.ts');
    compiled.set(source, code);
  }
  return sandbox.execute({
    projectId: opts.projectId ?? 'project-1',
    botId: opts.botId ?? `bot-${++counter}`,
    codeVersion: opts.codeVersion ?? 'v1',
    compiledCode: opts.compiledCode ?? code,
    timeoutMs: opts.timeoutMs ?? 5000,
    memoryMb: opts.memoryMb ?? 64,
    event: event(opts.event),
    medplum: opts.medplum ?? {},
  });
}

function value(r: ExecutionResult): unknown {
  if (!r.ok) throw new Error(`expected ok, got ${r.error}: ${r.message}`);
  return r.value;
}

function json(r: ExecutionResult): unknown {
  const v = value(r) as { kind: string; json?: unknown };
  expect(v.kind).toBe('json');
  return v.json;
}

describe('bot sandbox', () => {
  let sandbox: BotSandbox;
  const make = (opts: SandboxOptions = {}): BotSandbox => {
    const s = new BotSandbox({ preludes: [HL7_PRELUDE], ...opts });
    extra.push(s);
    return s;
  };
  const extra: BotSandbox[] = [];
  beforeAll(() => {
    sandbox = make();
  });
  afterAll(() => {
    for (const s of extra) s.dispose();
  });

  describe('compile and handler shapes', () => {
    it('runs an ESM handler', async () => {
      const r = await run(
        sandbox,
        `export async function handler(medplum, event) { return { echo: event.input }; }`,
      );
      expect(json(r)).toEqual({ echo: { hello: 'world' } });
    });

    it('hands JSON text (a checked request body) to the bot as the value it holds, with the rest of the event', async () => {
      const text = '{ "a": [1, 2.50, "\\u00e9"], "__proto__": { "x": 1 }, "b": null, "a2": { } }';
      const r = await run(
        sandbox,
        `export async function handler(medplum, event) {
          return { input: event.input, own: Object.keys(event.input), type: event.contentType, trace: event.traceId };
        }`,
        { event: { input: new JsonText(text), contentType: 'application/json', traceId: 't-1' } },
      );
      const parsed = JSON.parse(text) as Record<string, unknown>;
      expect(json(r)).toEqual({
        input: parsed,
        own: Object.keys(parsed),
        type: 'application/json',
        trace: 't-1',
      });
    });

    it('runs CommonJS exports.handler, module.exports.handler and module.exports = { handler }', async () => {
      for (const src of [
        `exports.handler = async (m, e) => 'a' + e.input.hello;`,
        `module.exports.handler = async function (m, e) { return 'a' + e.input.hello; };`,
        `module.exports = { handler: async (m, e) => 'a' + e.input.hello };`,
        `export default async function handler(m, e) { return 'a' + e.input.hello; }`,
      ]) {
        expect(value(await run(sandbox, src))).toEqual({ kind: 'string', text: 'aworld' });
      }
    });

    it('compiles and runs a TypeScript handler', async () => {
      const src = `
        import type { Patient } from '@medplum/fhirtypes';
        import { createReference } from '@medplum/core';
        interface Input { name: string }
        enum Color { Red = 'red' }
        export async function handler(medplum: unknown, event: { input: Input }): Promise<Patient & { ref: unknown }> {
          const p: Patient = { resourceType: 'Patient', id: 'p1', name: [{ text: event.input.name }] };
          return { ...p, ref: createReference(p), color: Color.Red } as Patient & { ref: unknown };
        }`;
      const r = await run(sandbox, src, { event: { input: { name: 'Ada' } } });
      expect(json(r)).toEqual({
        resourceType: 'Patient',
        id: 'p1',
        name: [{ text: 'Ada' }],
        ref: { reference: 'Patient/p1' },
        color: 'red',
      });
    });

    it('reports compile errors with line:column', async () => {
      const src = `export async function handler() {\n  const x = ;\n  return x;\n}`;
      const err = await BotSandbox.compile(src, 'my-bot.ts').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CompileError);
      const ce = err as CompileError;
      expect(ce.line).toBe(2);
      expect(ce.column).toBe(13);
      expect(ce.message).toMatch(/^my-bot\.ts:2:13: /);
    });

    it('fails cleanly when there is no handler or the compiled code is not valid', async () => {
      const r = await run(sandbox, `export const notAHandler = 1;`);
      expect(r).toMatchObject({ ok: false, error: 'error' });
      expect(!r.ok && r.message).toMatch(/must export a handler/);
      const bad = await sandbox.execute({
        ...(await baseRequest()),
        compiledCode: 'exports.handler = async () => {',
      });
      expect(bad).toMatchObject({ ok: false, error: 'error' });
      expect(!bad.ok && bad.message).toMatch(/SyntaxError/);
    });
  });

  async function baseRequest(): Promise<ExecuteRequest> {
    return {
      projectId: 'project-1',
      botId: `bot-${++counter}`,
      codeVersion: 'v1',
      compiledCode: await BotSandbox.compile('export async function handler(m, e) { return e.input; }'),
      timeoutMs: 5000,
      memoryMb: 64,
      event: event(),
      medplum: {},
    };
  }

  describe('inputs and outputs', () => {
    const echo = `export async function handler(medplum, event) { return event.input; }`;

    it('echoes every JSON input kind', async () => {
      for (const input of [
        { a: [1, 2, { b: null }] },
        [1, 'x'],
        42,
        true,
        null,
        { resourceType: 'Patient' },
      ]) {
        expect(json(await run(sandbox, echo, { botId: 'echo', event: { input } }))).toEqual(input);
      }
      expect(value(await run(sandbox, echo, { botId: 'echo', event: { input: 'plain text' } }))).toEqual({
        kind: 'string',
        text: 'plain text',
      });
      expect(value(await run(sandbox, echo, { botId: 'echo', event: { input: undefined } }))).toEqual({
        kind: 'undefined',
      });
    });

    it('re-parses HL7 input with the prelude and returns HL7 output', async () => {
      const src = `
        import { Hl7Message } from '@medplum/core';
        export async function handler(medplum, event) {
          if (!(event.input instanceof Hl7Message)) throw new Error('not an Hl7Message');
          if (require('@medplum/core').answer !== 42) throw new Error('namespace not exported');
          const msh = event.input.getSegment('MSH');
          msh[8] = 'ACK';
          return event.input;
        }`;
      const r = await run(sandbox, src, {
        event: {
          contentType: HL7_CONTENT_TYPE,
          input: { hl7: 'MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5\rPID|1||123' },
        },
      });
      expect(value(r)).toEqual({ kind: 'hl7', text: 'MSH|^~\\&|A|B|C|D|20240101||ACK|1|P|2.5\rPID|1||123' });
    });

    it('returns strings, objects, FHIR resources and undefined', async () => {
      expect(value(await run(sandbox, `export const handler = async () => 'hi';`))).toEqual({
        kind: 'string',
        text: 'hi',
      });
      expect(json(await run(sandbox, `export const handler = async () => ({ a: 1, b: [true] });`))).toEqual({
        a: 1,
        b: [true],
      });
      expect(
        json(
          await run(sandbox, `export const handler = async () => ({ resourceType: 'Patient', id: '1' });`),
        ),
      ).toEqual({ resourceType: 'Patient', id: '1' });
      expect(value(await run(sandbox, `export const handler = async () => {};`))).toEqual({
        kind: 'undefined',
      });
    });

    it('shapes the HTTP response with BotResponse', async () => {
      const src = `
        import { BotResponse as CoreBotResponse } from '@medplum/core';
        export async function handler(medplum, event) {
          if (CoreBotResponse !== BotResponse) throw new Error('two BotResponse classes');
          return new BotResponse({
            status: 201,
            headers: { 'X-Custom': 'yes', 'Set-Cookie': 'session=evil', 'Access-Control-Allow-Origin': '*' },
            contentType: 'text/csv',
            body: 'a,b\\n1,2',
          });
        }`;
      expect(value(await run(sandbox, src))).toEqual({
        kind: 'response',
        status: 201,
        contentType: 'text/csv',
        headers: { 'x-custom': 'yes', 'content-type': 'text/csv' },
        body: { type: 'text', text: 'a,b\n1,2' },
      });
      const jsonBody = `export const handler = async () => new BotResponse({ status: 404, body: { resourceType: 'OperationOutcome' } });`;
      expect(value(await run(sandbox, jsonBody))).toEqual({
        kind: 'response',
        status: 404,
        contentType: undefined,
        headers: {},
        body: { type: 'json', json: { resourceType: 'OperationOutcome' } },
      });
      const invalid = await run(
        sandbox,
        `export const handler = async () => new BotResponse({ status: 99 });`,
      );
      expect(invalid).toMatchObject({ ok: false, error: 'error' });
      const badHeader = await run(
        sandbox,
        `export const handler = async () => new BotResponse({ headers: { 'x-a': 'a\\r\\nSet-Cookie: x=1' } });`,
      );
      expect(badHeader).toMatchObject({ ok: false, error: 'error' });
      // A forged object (not built by the constructor) is re-validated on the host.
      const forged = await run(
        sandbox,
        `export const handler = async () => { const r = Object.create(BotResponse.prototype); r.status = 1000; r.headers = {}; return r; };`,
      );
      expect(forged).toMatchObject({ ok: false, error: 'error' });
    });

    it('captures console output and truncates it', async () => {
      const src = `
        export async function handler() {
          console.log('hello', 1, { a: 1 }, [2]);
          console.info('info'); console.warn('warn'); console.error(new Error('boom'));
          globalThis.console.log('via global');
          await new Promise((r) => setTimeout(r, 5));
          console.log('after await');
          return 'ok';
        }`;
      const r = await run(sandbox, src);
      expect(r.ok).toBe(true);
      expect(r.logs).toMatch(
        /^hello 1 \{"a":1\} \[2\]\ninfo\nwarn\nError: boom\n(.|\n)*via global\nafter await\n$/,
      );

      const small = make({ logLimitBytes: 100 });
      const spam = `export async function handler() { for (let i = 0; i < 100000; i++) console.log('line ' + i); return 'done'; }`;
      const t = await run(small, spam);
      expect(value(t)).toEqual({ kind: 'string', text: 'done' });
      expect(t.logs.startsWith('line 0\nline 1\n')).toBe(true);
      expect(t.logs).toMatch(/\[logs truncated: limit of 100 bytes reached\]\n$/);
      expect(t.logs.length).toBeLessThan(200);
    });

    it('delivers every log line written before the handler returns, in order', async () => {
      const src = `export async function handler() { for (let i = 0; i < 500; i++) console.log(i); return 'x'; }`;
      for (let k = 0; k < 5; k++) {
        const r = await run(sandbox, src, { botId: 'log-order' });
        expect(r.logs).toBe(Array.from({ length: 500 }, (_, i) => `${i}\n`).join(''));
      }
    });

    it('keeps concurrent executions of the same bot apart (logs, medplum, module state)', async () => {
      const src = `
        let calls = 0;
        export async function handler(medplum, event) {
          calls++;
          console.log('start', event.input.n);
          const who = await medplum.whoami();
          await new Promise((r) => setTimeout(r, 5 + (event.input.n % 3)));
          console.log('end', event.input.n, who);
          return { n: event.input.n, who, calls };
        }`;
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, n) =>
          run(sandbox, src, {
            botId: 'concurrent',
            event: { input: { n } },
            medplum: { whoami: async () => `user-${n}` },
          }),
        ),
      );
      results.forEach((r, n) => {
        expect(json(r)).toEqual({ n, who: `user-${n}`, calls: 1 });
        expect(r.logs).toBe(`start ${n}\nend ${n} user-${n}\n`);
      });
    });
  });

  describe('errors and limits', () => {
    it('returns only the message of a thrown error', async () => {
      const r = await run(
        sandbox,
        `export async function handler() { throw new Error('Patient not found'); }`,
      );
      expect(r).toMatchObject({ ok: false, error: 'error', message: 'Patient not found' });
      const s = await run(sandbox, `export async function handler() { throw 'plain string'; }`);
      expect(s).toMatchObject({ ok: false, error: 'error', message: 'plain string' });
      const sync = await run(sandbox, `exports.handler = () => { null.x; };`);
      expect(sync).toMatchObject({ ok: false, error: 'error' });
      expect(!sync.ok && sync.message).toMatch(/Cannot read properties of null/);
      expect(JSON.stringify([r, s, sync])).not.toMatch(/node_modules|\/work\/|node:internal|isolated-vm/);
    });

    it('stops a sync infinite loop, then runs the same bot again', async () => {
      const src = `export async function handler(m, e) { if (e.input.spin) { while (true) {} } return 'alive'; }`;
      const r = await run(sandbox, src, {
        botId: 'spinner',
        timeoutMs: 300,
        event: { input: { spin: true } },
      });
      expect(r).toMatchObject({ ok: false, error: 'timeout' });
      expect(r.durationMs).toBeGreaterThanOrEqual(250);
      expect(r.durationMs).toBeLessThan(3000);
      const again = await run(sandbox, src, { botId: 'spinner', event: { input: { spin: false } } });
      expect(value(again)).toEqual({ kind: 'string', text: 'alive' });
    });

    it('stops async loops: microtasks, a never-settling promise, setTimeout chains, loops after await', async () => {
      const cases = [
        `export async function handler() { while (true) await Promise.resolve(); }`,
        `export async function handler() { return new Promise(() => {}); }`,
        `export async function handler() { return new Promise(() => { const loop = () => setTimeout(loop, 0); loop(); }); }`,
        `export async function handler(medplum) { await medplum.ping(); while (true) {} }`,
        `export async function handler() { await new Promise((r) => setTimeout(r, 1)); for (;;) {} }`,
      ];
      for (const src of cases) {
        const started = Date.now();
        const r = await run(sandbox, src, { timeoutMs: 300, medplum: { ping: async () => 'pong' } });
        expect(r, src).toMatchObject({ ok: false, error: 'timeout' });
        expect(Date.now() - started).toBeLessThan(3000);
      }
    });

    it('keeps the host event loop running while a bot spins', async () => {
      let ticks = 0;
      const order: string[] = [];
      const interval = setInterval(() => ticks++, 10);
      const timer = setTimeout(() => order.push('host timer'), 100);
      try {
        const r = await run(sandbox, `export async function handler() { while (true) {} }`, {
          timeoutMs: 600,
        });
        order.push('bot answered');
        expect(r).toMatchObject({ ok: false, error: 'timeout' });
      } finally {
        clearInterval(interval);
        clearTimeout(timer);
      }
      // A host timer due during the spin fires before the answer, and the 10 ms interval keeps ticking (about 60
      // times; a loop held for the whole spin would have run it at most once).
      expect(order).toEqual(['host timer', 'bot answered']);
      expect(ticks).toBeGreaterThanOrEqual(5);
    });

    it('reports memory bombs as memory errors and the host survives', async () => {
      const bombs = [
        `export async function handler() { const a = []; while (true) a.push({ x: Math.random(), s: 'x' + Math.random() }); }`,
        `export async function handler() { let s = 'x'.repeat(1 << 20); const keep = []; while (true) { keep.push(s + keep.length); s = s + s.slice(1); } }`,
      ];
      // Several rounds: V8 sometimes gives up on such an isolate (a catastrophic error) and leaves the call into
      // it unsettled; the answer must still be a memory error, long before the time limit.
      for (const src of [...bombs, ...bombs, ...bombs]) {
        const before = process.memoryUsage().rss;
        // A memory error, not a timeout: the sandbox's own clock says it came within the time limit (the test's
        // wall clock on a shared machine would measure the machine).
        const r = await run(sandbox, src, { botId: 'bomb', memoryMb: 16, timeoutMs: 5_000 });
        expect(r, src).toMatchObject({ ok: false, error: 'memory' });
        expect(process.memoryUsage().rss - before).toBeLessThan(512 * 1024 * 1024);
      }
      const after = await run(sandbox, `export const handler = async () => 'recovered';`, {
        botId: 'bomb',
        memoryMb: 16,
      });
      expect(value(after)).toEqual({ kind: 'string', text: 'recovered' });
    });

    it('refuses huge outputs without copying them out', async () => {
      const small = make({ maxOutputBytes: 1024 * 1024 });
      // 20 MB flat string, a 256 M-character rope (cheap in the isolate, fatal if flattened), a big object.
      const cases = [
        `export const handler = async () => 'x'.repeat(20 * 1024 * 1024);`,
        `export const handler = async () => { let s = 'x'.repeat(1 << 20); for (let i = 0; i < 8; i++) s = s + s; return s; };`,
        `export const handler = async () => Array.from({ length: 200000 }, (_, i) => ({ i, s: 'abcdefgh' }));`,
        `export const handler = async () => new BotResponse({ body: 'y'.repeat(2 * 1024 * 1024) });`,
      ];
      for (const src of cases) {
        const r = await run(small, src, { memoryMb: 128 });
        expect(r, src).toMatchObject({ ok: false, error: 'output-too-large' });
      }
      // Under the default 10 MB cap a 500 M-character result is refused too (string length or memory limit).
      const huge = await run(sandbox, `export const handler = async () => 'x'.repeat(1 << 20).repeat(500);`, {
        memoryMb: 64,
      });
      expect(huge.ok).toBe(false);
      expect(['output-too-large', 'memory']).toContain(!huge.ok && huge.error);
    });

    it('limits host calls per execution', async () => {
      const limited = make({ maxHostCallsPerExecution: 5, maxConcurrentHostCalls: 2 });
      let inFlight = 0;
      let maxInFlight = 0;
      const ping: HostFunction = async () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return 'pong';
      };
      const src = `export async function handler(medplum) {
        const r = await Promise.allSettled(Array.from({ length: 8 }, () => medplum.ping()));
        return r.map((x) => x.status === 'fulfilled' ? x.value : x.reason.message);
      }`;
      const out = json(await run(limited, src, { medplum: { ping } })) as string[];
      expect(out.slice(0, 5)).toEqual(['pong', 'pong', 'pong', 'pong', 'pong']);
      expect(out[5]).toMatch(/Too many medplum\/fetch calls/);
      expect(maxInFlight).toBeLessThanOrEqual(2);
    });
  });

  describe('escape attempts', () => {
    it('cannot reach the host through bridged values, functions or prototypes', async () => {
      const src = `
        export async function handler(medplum, event) {
          const out = {};
          const tryIt = (name, fn) => { try { out[name] = fn(); } catch (e) { out[name] = 'threw: ' + e.message; } };
          tryIt('inputCtor', () => event.input.constructor.constructor('return typeof process')());
          tryIt('inputProcess', () => event.input.constructor.constructor('return process')());
          tryIt('medplumCtor', () => medplum.readResource.constructor.constructor('return typeof process + typeof require + typeof Buffer')());
          tryIt('thisCtor', () => this.constructor.constructor('return process')());
          tryIt('protoChain', () => {
            const chain = [];
            let o = event.input;
            while (o) { chain.push(Object.getOwnPropertyNames(o).sort().join(',').slice(0, 40)); o = Object.getPrototypeOf(o); }
            return chain.length + ':' + (Object.getPrototypeOf(event.input) === Object.prototype);
          });
          tryIt('fnProto', () => Object.getPrototypeOf(Object.getPrototypeOf(medplum.readResource)) === Function.prototype);
          tryIt('globals', () => [typeof globalThis.process, typeof globalThis.require, typeof globalThis.Buffer,
            typeof globalThis.module, typeof globalThis.ivm, typeof globalThis.WebAssembly, typeof globalThis.SharedArrayBuffer].join(','));
          tryIt('requireFs', () => require('fs'));
          tryIt('requireChild', () => require('child_process'));
          out.importFs = await import('fs').then(() => 'imported', (e) => 'rejected: ' + e.message);
          out.rawImport = await (0, eval)("import('fs')").then(() => 'imported', (e) => 'rejected: ' + e.message);
          const hostErr = await medplum.boom().catch((e) => e);
          out.hostErr = [hostErr instanceof Error, hostErr.message, String(hostErr.stack).includes(${JSON.stringify(ROOT)}), hostErr.outcome];
          tryIt('hostErrCtor', () => hostErr.constructor.constructor('return typeof process')());
          const data = await medplum.readResource('Patient', '1');
          data.name = 'mutated';
          tryIt('resultCtor', () => data.constructor.constructor('return typeof process')());
          tryIt('stack', () => String(new Error('x').stack).includes(${JSON.stringify(ROOT)}));
          return out;
        }`;
      const hostObject = { resourceType: 'Patient', id: '1', name: 'original' };
      const r = await run(sandbox, src, {
        medplum: {
          readResource: async () => hostObject,
          boom: async () => {
            throw Object.assign(new Error('Forbidden'), {
              outcome: { resourceType: 'OperationOutcome', id: 'forbidden' },
            });
          },
        },
      });
      expect(json(r)).toEqual({
        inputCtor: 'undefined',
        inputProcess: 'threw: process is not defined',
        medplumCtor: 'undefinedundefinedundefined',
        thisCtor: 'threw: process is not defined',
        protoChain: '2:true',
        fnProto: true,
        globals: 'undefined,undefined,undefined,undefined,undefined,undefined,undefined',
        requireFs: "threw: Cannot find module 'fs': only '@medplum/core' is available in the bot sandbox",
        requireChild:
          "threw: Cannot find module 'child_process': only '@medplum/core' is available in the bot sandbox",
        importFs: "rejected: Cannot find module 'fs': only '@medplum/core' is available in the bot sandbox",
        rawImport: expect.stringMatching(/^rejected: /),
        hostErr: [true, 'Forbidden', false, { resourceType: 'OperationOutcome', id: 'forbidden' }],
        hostErrCtor: 'undefined',
        resultCtor: 'undefined',
        stack: false,
      });
      expect(hostObject.name).toBe('original');
    });

    it('keeps globals and secrets of one bot invisible to other bots and projects', async () => {
      const writer = `export async function handler(m, e) {
        globalThis.leaked = e.secrets.apiKey; Object.prototype.polluted = 'yes'; Array.prototype.push = () => 'hijacked';
        return 'written'; }`;
      const reader = `export async function handler() {
        const a = []; a.push(1);
        return { leaked: globalThis.leaked ?? null, polluted: ({}).polluted ?? null, push: a.length }; }`;
      const w = await run(sandbox, writer, {
        projectId: 'project-A',
        botId: 'shared-id',
        event: { secrets: { apiKey: { name: 'apiKey', valueString: 'TOP-SECRET' } } },
      });
      expect(value(w)).toEqual({ kind: 'string', text: 'written' });
      // Another bot in the same project, and a bot with the same id and codeVersion in another project.
      for (const target of [
        { projectId: 'project-A', botId: 'other-bot' },
        { projectId: 'project-B', botId: 'shared-id' },
      ]) {
        const r = await run(sandbox, reader, target);
        expect(json(r), JSON.stringify(target)).toEqual({ leaked: null, polluted: null, push: 1 });
      }
    });

    it('rejects dynamic import even without the compiler', async () => {
      const raw = await sandbox.execute({
        ...(await baseRequest()),
        compiledCode: `exports.handler = async () => import('fs').then(() => 'imported', (e) => 'rejected: ' + e.message);`,
      });
      expect(value(raw)).toEqual({ kind: 'string', text: 'rejected: Not supported' });
    });

    it('with contextPerExecution nothing persists between executions of the same bot', async () => {
      const fresh = make({ contextPerExecution: true });
      const src = `export async function handler() { globalThis.n = (globalThis.n ?? 0) + 1; return globalThis.n; }`;
      for (let i = 0; i < 3; i++) expect(json(await run(fresh, src, { botId: 'fresh' }))).toBe(1);
      // Default mode: a warm context is reused, so deliberate globalThis writes may persist (module state does not).
      const warm = [];
      for (let i = 0; i < 3; i++) warm.push(json(await run(sandbox, src, { botId: 'warm' })));
      expect(warm).toEqual([1, 2, 3]);
      const moduleState = `let n = 0; export async function handler() { return ++n; }`;
      for (let i = 0; i < 3; i++) expect(json(await run(sandbox, moduleState, { botId: 'mod' }))).toBe(1);
    });

    it('rebuilds the isolate when the code version changes and caps warm isolates', async () => {
      const capped = make({ maxIsolates: 2 });
      const v1 = `export const handler = async () => 'v1';`;
      const v2 = `export const handler = async () => 'v2';`;
      expect(value(await run(capped, v1, { botId: 'versioned', codeVersion: '1' }))).toMatchObject({
        text: 'v1',
      });
      expect(value(await run(capped, v2, { botId: 'versioned', codeVersion: '2' }))).toMatchObject({
        text: 'v2',
      });
      for (let i = 0; i < 5; i++) await run(capped, v1, { botId: `lru-${i}` });
      expect(capped.stats().isolates).toBeLessThanOrEqual(2);
    });

    it('bridges medplum calls with copied JSON in both directions', async () => {
      const seen: unknown[] = [];
      const src = `export async function handler(medplum) {
        const arg = { resourceType: 'Patient', tags: ['a'] };
        const created = await medplum.createResource(arg);
        const nothing = await medplum.noResult();
        let err; try { await medplum.searchResources('Patient', { name: 'x' }); } catch (e) { err = e.message; }
        return { created, nothing: nothing === undefined, err, argAfter: arg };
      }`;
      const r = await run(sandbox, src, {
        medplum: {
          createResource: async (res) => {
            seen.push(res);
            (res as { tags: string[] }).tags.push('host-mutated');
            return { ...(res as object), id: 'new-id' };
          },
          noResult: async () => undefined,
          searchResources: async () => {
            throw new Error('Search failed: bad parameter');
          },
        },
      });
      expect(json(r)).toEqual({
        created: { resourceType: 'Patient', tags: ['a', 'host-mutated'], id: 'new-id' },
        nothing: true,
        err: 'Search failed: bad parameter',
        argAfter: { resourceType: 'Patient', tags: ['a'] },
      });
      expect(seen).toEqual([{ resourceType: 'Patient', tags: ['a', 'host-mutated'] }]);
    });

    it('supports setTimeout, clearTimeout and setInterval within the deadline', async () => {
      const src = `export async function handler() {
        const events = [];
        const t = setTimeout(() => events.push('cleared'), 5);
        clearTimeout(t);
        await new Promise((r) => setTimeout(() => { events.push('timeout'); r(); }, 10));
        await new Promise((r) => { let n = 0; const i = setInterval(() => { events.push('tick' + n); if (++n === 3) { clearInterval(i); r(); } }, 2); });
        await new Promise((r) => setTimeout(r, 10));
        return events;
      }`;
      expect(json(await run(sandbox, src))).toEqual(['timeout', 'tick0', 'tick1', 'tick2']);
    });
  });

  describe('fetch policy', () => {
    let server: http.Server;
    let port = 0;
    let hits = 0;
    beforeAll(async () => {
      server = http.createServer((req, res) => {
        hits++;
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          res.setHeader('x-test', 'yes');
          res.setHeader('content-type', 'application/json');
          res.end(
            JSON.stringify({
              method: req.method,
              url: req.url,
              body,
              auth: req.headers.authorization ?? null,
            }),
          );
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    const fetcher = `export async function handler(medplum, event) {
      try {
        const res = await fetch(event.input.url, { method: 'POST', body: 'ping', headers: { authorization: 'Bearer t' } });
        return { status: res.status, ok: res.ok, header: res.headers.get('x-test'), json: await res.json() };
      } catch (e) { return { error: e.message }; }
    }`;

    it('refuses loopback, private and metadata destinations by default', async () => {
      hits = 0;
      for (const url of [
        `http://127.0.0.1:${port}/x`,
        `http://localhost:${port}/x`,
        `http://[::1]:${port}/x`,
        `http://[::ffff:127.0.0.1]:${port}/x`,
        `http://2130706433:${port}/x`,
        `http://169.254.169.254/latest/meta-data/`,
        `http://10.0.0.1/`,
        `http://0.0.0.0:${port}/`,
        `file:///etc/passwd`,
      ]) {
        const r = json(await run(sandbox, fetcher, { botId: 'fetcher', event: { input: { url } } })) as {
          error?: string;
        };
        expect(r.error, url).toMatch(/refused|invalid URL/);
      }
      expect(hits).toBe(0);
    });

    it('allows private destinations when allowPrivate is set', async () => {
      hits = 0;
      const open = make({ fetch: { allowPrivate: true } });
      const r = await run(open, fetcher, { event: { input: { url: `http://127.0.0.1:${port}/path?q=1` } } });
      expect(json(r)).toEqual({
        status: 200,
        ok: true,
        header: 'yes',
        json: { method: 'POST', url: '/path?q=1', body: 'ping', auth: 'Bearer t' },
      });
      expect(hits).toBe(1);
    });

    it('classifies addresses', () => {
      for (const a of [
        '127.0.0.1',
        '10.1.2.3',
        '172.16.0.1',
        '172.31.255.255',
        '192.168.1.1',
        '169.254.169.254',
        '100.64.0.1',
        '0.0.0.0',
        '::',
        '::1',
        'fe80::1',
        'fd00:ec2::254',
        'fc00::1',
        '::ffff:127.0.0.1',
        '::ffff:a00:1',
        '64:ff9b::7f00:1',
        '2002:a9fe:a9fe::1',
        'ff02::1',
        'not-an-ip',
      ]) {
        expect(isForbiddenAddress(a), a).toBe(true);
      }
      for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
        expect(isForbiddenAddress(a), a).toBe(false);
      }
      expect(isForbiddenHostname('LOCALHOST.')).toBe(true);
      expect(isForbiddenHostname('api.localhost')).toBe(true);
      expect(isForbiddenHostname('metadata.google.internal')).toBe(true);
      expect(isForbiddenHostname('example.com')).toBe(false);
    });
  });

  describe('throughput', () => {
    it('measures warm echo executions per second', async () => {
      const echo = `export async function handler(medplum, event) { return event.input; }`;
      const measure = async (
        s: BotSandbox,
        botId: string,
        concurrency: number,
        n: number,
      ): Promise<number> => {
        await run(s, echo, { botId });
        let left = n;
        const started = performance.now();
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (left-- > 0) {
              const n = left;
              const r = await run(s, echo, {
                botId,
                event: { input: { resourceType: 'Patient', id: `p${n}` } },
              });
              if (!r.ok) throw new Error(r.message);
              // Each execution answers its own input: none saw another's.
              if (r.value.kind !== 'json' || (r.value.json as { id?: string }).id !== `p${n}`)
                throw new Error(`execution ${n} answered ${JSON.stringify(r.value)}`);
            }
          }),
        );
        return Math.round(n / ((performance.now() - started) / 1000));
      };
      const seq = await measure(sandbox, 'bench', 1, 3000);
      const conc = await measure(sandbox, 'bench', 16, 5000);
      const fresh = make({ contextPerExecution: true });
      const freshSeq = await measure(fresh, 'bench', 1, 500);
      const freshConc = await measure(fresh, 'bench', 16, 1000);
      console.log(
        `[sandbox throughput] warm echo: ${seq}/s sequential (${(1000 / seq).toFixed(3)} ms each), ${conc}/s with 16 concurrent; ` +
          `contextPerExecution: ${freshSeq}/s sequential, ${freshConc}/s with 16 concurrent`,
      );
      // Concurrency must not collapse throughput (executions serialised behind one another, a context built per
      // execution): 16 at once do at least a quarter of sequential's rate, in both modes (measured: about twice).
      expect(conc).toBeGreaterThan(seq / 4);
      expect(freshConc).toBeGreaterThan(freshSeq / 4);
    });
  });
});
