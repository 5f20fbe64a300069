// The JavaScript that runs INSIDE each bot isolate (a plain string: it is never executed by Node). It is evaluated
// once per context, after the preludes and before any bot code, so it captures pristine intrinsics. It evaluates to
// an init function; the host calls it with the per-isolate host capabilities and receives `run(execId, payload)`,
// which it calls once per execution.
//
// Everything crossing the boundary is a string or number: the payload is a JSON string, host replies are JSON
// strings, the result is a JSON string whose size is checked here (cheaply, before copying out) and again on the
// host. Host capabilities (log, call, fetch, sleep) live only in this closure; bot code never sees them, only the
// per-execution wrappers below. Inside one isolate the bot can of course tamper with anything (e.g. patch
// prototypes between its own executions); that only ever affects the same bot, and the host re-validates every
// value that comes out.

/** Name of the wrapper's parameters, in order: the bot module sees these as lexical bindings. */
export const MODULE_PARAMS = [
  'exports',
  'require',
  'module',
  'console',
  'fetch',
  'setTimeout',
  'clearTimeout',
  'setInterval',
  'clearInterval',
  'BotResponse',
] as const;

/** Wraps compiled CommonJS bot code into a script that evaluates to the module factory function. */
export function wrapModule(code: string): string {
  // Prefix on the first line so bot line numbers in stack traces stay correct.
  return `(function (${MODULE_PARAMS.join(', ')}) {${code}\n})`;
}

export const RUNTIME_SOURCE = String.raw`(function initBotRuntime(hostLog, hostCall, hostFetch, hostSleep, moduleFactory, configJson) {
  'use strict';
  const G = globalThis;
  const jsonParse = JSON.parse;
  const jsonStringify = JSON.stringify;
  const ReflectApply = Reflect.apply;
  const ObjectKeys = Object.keys;
  const ObjectFreeze = Object.freeze;
  const ObjectCreate = Object.create;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectGetOwnPropertyNames = Object.getOwnPropertyNames;
  const ObjectHasOwn = Object.hasOwn;
  const ArrayIsArray = Array.isArray;
  const _String = String;
  const _Number = Number;
  const _Error = Error;
  const _TypeError = TypeError;
  const _Map = Map;
  const _Promise = Promise;
  const StringSlice = String.prototype.slice;
  const StringToLowerCase = String.prototype.toLowerCase;
  const StringToUpperCase = String.prototype.toUpperCase;
  const RegExpTest = RegExp.prototype.test;
  const PromiseThen = Promise.prototype.then;
  const MapGet = Map.prototype.get;
  const MapSet = Map.prototype.set;
  const MapDelete = Map.prototype.delete;
  const MapHas = Map.prototype.has;
  const MapValues = Map.prototype.values;
  const MapEntries = Map.prototype.entries;
  const DateNow = Date.now;
  const refApply = hostCall.apply;
  const APPLY_OPTS = { arguments: { copy: true }, result: { promise: true, copy: true } };
  const config = jsonParse(configJson);

  const slice = (s, a, b) => ReflectApply(StringSlice, s, [a, b]);
  const lower = (s) => ReflectApply(StringToLowerCase, s, []);
  const callRef = (ref, args) => ReflectApply(refApply, ref, [undefined, args, APPLY_OPTS]);
  const then = (p, f, r) => ReflectApply(PromiseThen, p, [f, r]);

  // Node/Web features that must not exist or are unsafe for limits: remove them from this context.
  for (const name of ['SharedArrayBuffer', 'Atomics', 'WebAssembly']) {
    try { delete G[name]; } catch (e) { /* ignore */ }
  }

  const HEADER_NAME = /^[!#$%&'*+.^_\x60|~0-9A-Za-z-]+$/;
  const HEADER_VALUE = /^[^\r\n\0]*$/;

  /** Helper to shape the HTTP response of a bot: return new BotResponse({ status, headers, contentType, body }). */
  class BotResponse {
    constructor(init) {
      const i = init === undefined || init === null ? {} : init;
      const status = i.status === undefined ? 200 : i.status;
      if (typeof status !== 'number' || status !== Math.trunc(status) || status < 200 || status > 599) {
        throw new _TypeError('BotResponse status must be an integer from 200 to 599');
      }
      const headers = {};
      if (i.headers !== undefined && i.headers !== null) {
        if (typeof i.headers !== 'object') throw new _TypeError('BotResponse headers must be an object');
        for (const k of ObjectKeys(i.headers)) {
          const v = _String(i.headers[k]);
          if (!ReflectApply(RegExpTest, HEADER_NAME, [k]) || !ReflectApply(RegExpTest, HEADER_VALUE, [v])) {
            throw new _TypeError('BotResponse header ' + jsonStringify(k) + ' is not a valid header');
          }
          headers[lower(k)] = v;
        }
      }
      if (i.contentType !== undefined && typeof i.contentType !== 'string') {
        throw new _TypeError('BotResponse contentType must be a string');
      }
      this.status = status;
      this.headers = headers;
      this.contentType = i.contentType !== undefined ? i.contentType : headers['content-type'];
      this.body = i.body;
    }
  }
  ObjectFreeze(BotResponse.prototype);
  ObjectFreeze(BotResponse);
  ObjectDefineProperty(G, 'BotResponse', { value: BotResponse, writable: false, configurable: false, enumerable: false });

  // HL7 support comes from the preludes (e.g. globalThis.Hl7Message); collect every Hl7* global they defined.
  // A prelude may also publish a namespace object named __medplum* (the HL7 bundle defines __medplumHl7): all its
  // properties become exports of require('@medplum/core') too.
  const core = ObjectCreate(null);
  for (const name of ObjectGetOwnPropertyNames(G)) {
    if (ReflectApply(RegExpTest, /^Hl7/, [name])) core[name] = G[name];
    const ns = ReflectApply(RegExpTest, /^__medplum/, [name]) ? G[name] : undefined;
    if (ns !== null && typeof ns === 'object') for (const k of ObjectKeys(ns)) core[k] = ns[k];
  }
  const Hl7Message = typeof G.Hl7Message === 'function' ? G.Hl7Message : undefined;
  core.BotResponse = BotResponse;
  core.getReferenceString = (r) => (r && r.resourceType && r.id ? r.resourceType + '/' + r.id : r && r.reference);
  core.createReference = (r) => {
    const ref = { reference: core.getReferenceString(r) };
    if (r && typeof r.display === 'string') ref.display = r.display;
    return ref;
  };
  core.resolveId = (ref) => {
    const s = ref && ref.reference;
    return typeof s === 'string' ? s.split('/')[1] : undefined;
  };
  core.sleep = (ms) => new _Promise((resolve) => G.setTimeout(resolve, ms));
  core.isResource = (v) => !!v && typeof v === 'object' && typeof v.resourceType === 'string';
  ObjectFreeze(core);

  const requireShim = (name) => {
    if (name === '@medplum/core' || name === 'medplum-core') return core;
    throw new _Error("Cannot find module '" + _String(name) + "': only '@medplum/core' is available in the bot sandbox");
  };

  // ---- executions ----
  const active = new _Map();
  let lastStarted = null;
  const current = () => (lastStarted && !lastStarted.done ? lastStarted : null);

  function formatArg(v) {
    try {
      if (typeof v === 'string') return v;
      if (v === undefined) return 'undefined';
      if (typeof v === 'function') return '[Function ' + (v.name || 'anonymous') + ']';
      if (typeof v === 'symbol' || typeof v === 'bigint') return _String(v);
      if (v instanceof _Error) {
        const s = v.stack;
        return typeof s === 'string' ? s : _String(v.name) + ': ' + _String(v.message);
      }
      if (typeof v === 'object' && v !== null) {
        const s = jsonStringify(v);
        if (typeof s === 'string') return s;
      }
      return _String(v);
    } catch (e) {
      return '[unformattable value]';
    }
  }

  function emitLog(exec, args) {
    if (!exec || exec.done || exec.logFull) return;
    let line = '';
    for (let i = 0; i < args.length; i++) line += (i ? ' ' : '') + formatArg(args[i]);
    const room = config.logLimit - exec.logChars;
    if (line.length + 1 > room) {
      line = slice(line, 0, room > 0 ? room : 0);
      exec.logFull = true;
    }
    exec.logChars += line.length + 1;
    hostLog(exec.id, line, exec.logFull);
  }

  function makeConsole(execGetter) {
    const log = (...args) => emitLog(execGetter(), args);
    return ObjectFreeze({ log, info: log, warn: log, error: log, debug: log, trace: log });
  }

  // Timers live here, in the isolate: an execution keeps at most one host sleep for its earliest timer (plus any
  // superseded by an earlier one), and each wake runs every due timer. So the host's event loop carries one wake per
  // execution, however many timers the bot sets (999 setInterval(0) used to be 999 host timers a millisecond).
  function makeTimers(execGetter) {
    function arm(exec) {
      if (exec.done) return;
      let next = Infinity;
      for (const t of ReflectApply(MapValues, exec.timers, [])) if (t.at < next) next = t.at;
      if (next === Infinity || (exec.wakeAt !== null && exec.wakeAt <= next)) return;
      exec.wakeAt = next;
      const delay = next - DateNow();
      then(callRef(hostSleep, [exec.id, delay > 0 ? delay : 0]), (fired) => {
        if (exec.wakeAt === next) exec.wakeAt = null;
        if (!fired || exec.done) return;
        runDue(exec);
        arm(exec);
      }, () => undefined);
    }
    function runDue(exec) {
      const now = DateNow();
      const due = [];
      for (const e of ReflectApply(MapEntries, exec.timers, [])) if (e[1].at <= now) due.push(e);
      due.sort((a, b) => a[1].at - b[1].at || a[0] - b[0]);
      for (const e of due) {
        const id = e[0];
        const t = e[1];
        if (exec.done || ReflectApply(MapGet, exec.timers, [id]) !== t) continue;
        if (t.repeat) t.at = now + t.ms;
        else ReflectApply(MapDelete, exec.timers, [id]);
        try {
          ReflectApply(t.fn, undefined, t.args);
        } catch (err) {
          emitLog(exec, ['Uncaught error in timer callback:', err]);
        }
      }
    }
    function add(fn, ms, args, repeat) {
      const exec = execGetter();
      if (typeof fn !== 'function') throw new _TypeError('timer callback must be a function');
      if (!exec || exec.done) return 0;
      if (exec.timers.size >= config.maxTimers) throw new _Error('Too many pending timers');
      const delay = ms > 0 ? _Number(ms) : 0;
      const id = ++exec.timerSeq;
      // Like Node: a delay under 1 ms is 1 ms (an interval of 0 does not spin).
      const t = { fn, args, ms: delay >= 1 ? delay : 1, at: DateNow() + (delay >= 1 ? delay : 1), repeat };
      ReflectApply(MapSet, exec.timers, [id, t]);
      arm(exec);
      return id;
    }
    const clear = (id) => {
      const exec = execGetter();
      if (exec) ReflectApply(MapDelete, exec.timers, [id]);
    };
    return {
      setTimeout: (fn, ms, ...args) => add(fn, ms, args, false),
      setInterval: (fn, ms, ...args) => add(fn, ms, args, true),
      clearTimeout: clear,
      clearInterval: clear,
    };
  }

  function makeHeaders(pairs) {
    const get = (name) => {
      const n = lower(_String(name));
      let out = null;
      for (const p of pairs) if (p[0] === n) out = out === null ? p[1] : out + ', ' + p[1];
      return out;
    };
    return ObjectFreeze({
      get,
      has: (name) => get(name) !== null,
      forEach: (cb) => { for (const p of pairs) cb(p[1], p[0]); },
      entries: () => pairs.map((p) => [p[0], p[1]])[Symbol.iterator](),
      keys: () => pairs.map((p) => p[0])[Symbol.iterator](),
      values: () => pairs.map((p) => p[1])[Symbol.iterator](),
      [Symbol.iterator]: () => pairs.map((p) => [p[0], p[1]])[Symbol.iterator](),
    });
  }

  function normalizeRequestHeaders(h) {
    const out = [];
    if (h === undefined || h === null) return out;
    if (ArrayIsArray(h)) {
      for (const p of h) out.push([_String(p[0]), _String(p[1])]);
    } else if (typeof h.forEach === 'function' && typeof h.get === 'function') {
      h.forEach((v, k) => out.push([_String(k), _String(v)]));
    } else if (typeof h === 'object') {
      for (const k of ObjectKeys(h)) out.push([k, _String(h[k])]);
    }
    return out;
  }

  function makeFetch(execGetter) {
    return async function fetch(input, init) {
      const exec = execGetter();
      if (!exec || exec.done) throw new _TypeError('fetch is not available after the bot execution finished');
      const i = init || {};
      const url = typeof input === 'string' ? input : input && typeof input.url === 'string' ? input.url : _String(input);
      const method = i.method !== undefined ? ReflectApply(StringToUpperCase, _String(i.method), []) : 'GET';
      let body = i.body;
      if (body !== undefined && body !== null && typeof body !== 'string') body = _String(body);
      if (typeof body === 'string' && body.length > config.maxArgChars) throw new _TypeError('fetch request body too large');
      const req = jsonStringify({
        url: _String(url),
        method,
        headers: normalizeRequestHeaders(i.headers),
        body: typeof body === 'string' ? body : undefined,
        redirect: i.redirect,
      });
      const reply = jsonParse(await callRef(hostFetch, [exec.id, req]));
      if (!reply.ok) throw new _TypeError(reply.message);
      const r = reply.response;
      let used = false;
      const consume = () => {
        if (used) throw new _TypeError('Body has already been consumed');
        used = true;
        return r.body;
      };
      return ObjectFreeze({
        ok: r.status >= 200 && r.status < 300,
        status: r.status,
        statusText: r.statusText,
        url: r.url,
        redirected: r.redirected,
        headers: makeHeaders(r.headers),
        get bodyUsed() { return used; },
        text: async () => consume(),
        json: async () => jsonParse(consume()),
      });
    };
  }

  function makeMedplum(exec, methods) {
    const client = {};
    for (const name of methods) {
      client[name] = async function (...args) {
        if (exec.done) throw new _Error('medplum.' + name + ' called after the bot execution finished');
        let argsJson;
        try {
          argsJson = jsonStringify(args);
        } catch (e) {
          throw new _TypeError('medplum.' + name + ': arguments must be JSON-serializable');
        }
        if (argsJson === undefined) argsJson = '[]';
        if (argsJson.length > config.maxArgChars) throw new _Error('medplum.' + name + ': arguments too large');
        const reply = jsonParse(await callRef(hostCall, [exec.id, name, argsJson]));
        if (!reply.ok) {
          const err = new _Error(reply.message);
          if (reply.outcome !== undefined) err.outcome = reply.outcome;
          throw err;
        }
        return reply.value;
      };
    }
    return ObjectFreeze(client);
  }

  // Global versions (for code that uses globalThis.console etc. instead of the lexical ones): they act for the
  // execution that started most recently. Module code gets exact per-execution bindings.
  const globalConsole = makeConsole(current);
  const globalTimers = makeTimers(current);
  const globalFetch = makeFetch(current);
  for (const [name, value] of [
    ['console', globalConsole],
    ['fetch', globalFetch],
    ['setTimeout', globalTimers.setTimeout],
    ['clearTimeout', globalTimers.clearTimeout],
    ['setInterval', globalTimers.setInterval],
    ['clearInterval', globalTimers.clearInterval],
    ['queueMicrotask', (fn) => { then(_Promise.resolve(), () => fn()); }],
  ]) {
    ObjectDefineProperty(G, name, { value, writable: true, configurable: true, enumerable: false });
  }

  // ---- result serialization ----
  const tooLarge = (n) => '{"kind":"too-large","size":' + n + '}';
  const max = config.maxOutputChars;

  function isHl7(v) {
    return Hl7Message !== undefined && v instanceof Hl7Message;
  }

  function encodeBody(body) {
    if (body === undefined || body === null) return '{"type":"empty"}';
    if (typeof body === 'string') {
      if (body.length > max) return null;
      return '{"type":"text","text":' + jsonStringify(body) + '}';
    }
    if (isHl7(body)) return '{"type":"text","text":' + jsonStringify(_String(body.toString())) + '}';
    const json = jsonStringify(body);
    if (json === undefined) return '{"type":"empty"}';
    if (json.length > max) return null;
    return '{"type":"json","json":' + json + '}';
  }

  function encode(value) {
    let out;
    if (value === undefined) return '{"kind":"undefined"}';
    if (typeof value === 'string') {
      if (value.length > max) return tooLarge(value.length);
      out = '{"kind":"string","text":' + jsonStringify(value) + '}';
    } else if (value instanceof BotResponse) {
      const body = encodeBody(value.body);
      if (body === null) return tooLarge(max + 1);
      out =
        '{"kind":"response","status":' + jsonStringify(_Number(value.status)) +
        ',"contentType":' + jsonStringify(typeof value.contentType === 'string' ? value.contentType : null) +
        ',"headers":' + jsonStringify(value.headers) + ',"body":' + body + '}';
    } else if (isHl7(value)) {
      const text = _String(value.toString());
      if (text.length > max) return tooLarge(text.length);
      out = '{"kind":"hl7","text":' + jsonStringify(text) + '}';
    } else {
      const json = jsonStringify(value);
      if (json === undefined) return '{"kind":"undefined"}';
      if (json.length > max) return tooLarge(json.length);
      out = '{"kind":"json","json":' + json + '}';
    }
    return out.length > max ? tooLarge(out.length) : out;
  }

  function encodeError(err) {
    let message;
    try {
      if (err !== null && typeof err === 'object' && 'message' in err) message = _String(err.message);
      else message = _String(err);
    } catch (e) {
      message = 'Bot threw an unprintable value';
    }
    if (message.length > 16384) message = slice(message, 0, 16384) + '...';
    return '{"kind":"error","message":' + jsonStringify(message) + '}';
  }

  function makeEvent(event) {
    const input = event.input;
    if (
      Hl7Message !== undefined && event.contentType === config.hl7ContentType &&
      input !== null && typeof input === 'object' && typeof input.hl7 === 'string'
    ) {
      event.input = Hl7Message.parse(input.hl7);
    }
    return event;
  }

  return async function run(execId, payloadJson) {
    const exec = {
      id: execId, done: false, logChars: 0, logFull: false, timers: new _Map(), timerSeq: 0, wakeAt: null,
    };
    ReflectApply(MapSet, active, [execId, exec]);
    lastStarted = exec;
    const self = () => exec;
    try {
      const payload = jsonParse(payloadJson);
      const event = makeEvent(payload.event);
      const medplum = makeMedplum(exec, payload.methods);
      const timers = makeTimers(self);
      const module = { exports: {} };
      moduleFactory(module.exports, requireShim, module, makeConsole(self), makeFetch(self), timers.setTimeout,
        timers.clearTimeout, timers.setInterval, timers.clearInterval, BotResponse);
      const exp = module.exports;
      let handler = exp && exp.handler;
      if (typeof handler !== 'function' && exp) {
        handler = typeof exp.default === 'function' ? exp.default : exp.default && exp.default.handler;
      }
      if (typeof handler !== 'function') {
        throw new _TypeError('Bot code must export a handler function: export async function handler(medplum, event)');
      }
      const value = await handler(medplum, event);
      return encode(value);
    } catch (err) {
      return encodeError(err);
    } finally {
      exec.done = true;
      ReflectApply(MapDelete, active, [execId]);
      if (lastStarted === exec) lastStarted = null;
      for (const e of active) lastStarted = e[1];
    }
  };
})`;
