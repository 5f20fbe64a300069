// The rows of the settings table (settings.ts) and how a variable becomes its value: one reader per kind of value
// (integer, boolean, size, list, ...), each with its default, the type and default the configuration page prints,
// and its strict parse (a value that does not parse is a ConfigError naming the variable: a typo stops the start).
import path from 'node:path';

/** Environment variables as loadConfig reads them (process.env, or a plain object in tests). */
export type Env = Readonly<Record<string, string | undefined>>;

/** A setting with a value it cannot take; startup stops with this message (main.ts prints it without a stack). */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The settings read so far, as `finish` sees them (untyped: the Config type is derived from the table). */
export type SettingsSoFar = Readonly<Record<string, unknown>>;

/** How one setting is read from its variable. */
export interface Reader<T> {
  /** The kind of value, as the configuration page names it (Markdown). */
  readonly type: string;
  /** The default, as the configuration page prints it (Markdown). */
  readonly defaultText: string;
  /** Unset (or empty, unless keepsEmpty) variable: the value, which may depend on another variable. */
  readonly default: (env: Env) => T;
  /** A set variable's value; throws ConfigError naming the variable when it does not parse. */
  readonly parse: (raw: string, name: string) => T;
  /** An empty variable is a value (`HOST=` is the empty string), not the default. */
  readonly keepsEmpty?: true;
  /** The final form, after overrides (which are held to it too); may use other settings (BASE_URL names PORT).
   * A method, so that a Reader<string> is a Reader<unknown> for the table's checks. */
  finish?(value: T, settings: SettingsSoFar): T;
}

/** A setting of the server's Config. */
export interface ServerSetting {
  /** The environment variable. */
  readonly env: string;
  /** The Config key; `group.key` for a setting inside a Config object (`graphql.maxDepth`). */
  readonly key: string;
  readonly read: Reader<unknown>;
  /** What it means, for the configuration page (Markdown, one line). */
  readonly doc: string;
  /** Its default is printed once at the first start that used it, and recorded in `Config.defaulted`. */
  readonly shownAtFirstStart?: true;
  /** NODE_ENV=production, set by the operator, refuses its documented default (it is public knowledge). */
  readonly secret?: true;
}

/** A variable read outside loadConfig: by a command of its own (`only`), or by the process before it. */
export interface OtherVariable {
  readonly env: string;
  /** The command that reads it, when only one does (`npm run studio`). */
  readonly only?: string;
  readonly type: string;
  readonly defaultText: string;
  readonly doc: string;
}

/** One section of the page. */
export interface Topic {
  readonly title: string;
  /** One sentence under the title. */
  readonly about: string;
  readonly settings: readonly (ServerSetting | OtherVariable)[];
}

/** Markdown code span. */
const code = (s: string | number | boolean): string => `\`${s}\``;

/** Integer bounds: `min`-`max` refuses values outside (with its own message); `atLeast` raises smaller ones. */
export interface IntRange {
  readonly min?: number;
  readonly max?: number;
  readonly atLeast?: number;
}

/** The strict non-negative integer parse (`Number`: `1e3` and `0x10` are integers too). */
function nonNegativeInt(raw: string, name: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

/** A non-negative integer, within `range` when given. */
export function int(def: number, range: IntRange = {}): Reader<number> {
  const { min, max, atLeast } = range;
  const bounded = min !== undefined && max !== undefined;
  return {
    type: bounded
      ? `integer, ${min}-${max}`
      : atLeast !== undefined
        ? `integer (below ${atLeast} counts as ${atLeast})`
        : 'integer',
    defaultText: code(def),
    default: () => def,
    parse: (raw, name) => {
      const n = nonNegativeInt(raw, name);
      if (bounded && (n < min || n > max)) throw new ConfigError(`${name} must be ${min}-${max}, got ${n}`);
      return atLeast !== undefined ? Math.max(atLeast, n) : n;
    },
  };
}

/** A non-negative integer, absent when unset or empty. */
export function optionalInt(): Reader<number | undefined> {
  return { type: 'integer', defaultText: '(unset)', default: () => undefined, parse: nonNegativeInt };
}

const TRUE_WORDS = ['1', 'true', 'yes', 'on'];
const FALSE_WORDS = ['0', 'false', 'no', 'off'];

/** A boolean: true/false, 1/0, yes/no, on/off in any case, nothing else. The default may depend on another
 * variable; then `defaultText` says how. */
export function bool(def: boolean | ((env: Env) => boolean), defaultText?: string): Reader<boolean> {
  return {
    type: 'boolean',
    defaultText: defaultText ?? code(String(def)),
    default: typeof def === 'function' ? def : () => def,
    parse: (raw, name) => {
      const word = raw.trim().toLowerCase();
      if (TRUE_WORDS.includes(word)) return true;
      if (FALSE_WORDS.includes(word)) return false;
      throw new ConfigError(`${name} must be true or false (or 1/0, yes/no, on/off), got "${raw}"`);
    },
  };
}

/** Who gets GraphQL introspection and suggestions: everyone, signed-in callers only, or no one. */
export type IntrospectionMode = 'all' | 'signed-in' | 'none';

/** GRAPHQL_INTROSPECTION: `true` (everyone), `signed-in`, or `false` (no one); the default depends on NODE_ENV. */
export function introspectionMode(
  def: (env: Env) => IntrospectionMode,
  defaultText: string,
): Reader<IntrospectionMode> {
  return {
    type: '`true`, `signed-in` or `false`',
    defaultText,
    default: def,
    parse: (raw, name) => {
      const word = raw.trim().toLowerCase();
      if (word === 'signed-in') return 'signed-in';
      if (TRUE_WORDS.includes(word)) return 'all';
      if (FALSE_WORDS.includes(word)) return 'none';
      throw new ConfigError(`${name} must be true, signed-in or false, got "${raw}"`);
    },
  };
}

/** Any text, taken as written; an empty variable is the empty string. */
export function text(def: string): Reader<string> {
  return {
    type: 'string',
    defaultText: code(def),
    default: () => def,
    parse: (raw) => raw,
    keepsEmpty: true,
  };
}

/** Text, absent when unset or empty. */
export function optionalText(type = 'string'): Reader<string | undefined> {
  return { type, defaultText: '(unset)', default: () => undefined, parse: (raw) => raw };
}

/** A size in bytes: a number of bytes, or with a unit as body-parser reads it (`1mb`, `64kb`: 1024-based). */
export function byteSize(def: string): Reader<number> {
  const parse = (raw: string, name: string): number => {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(raw);
    if (!m) throw new ConfigError(`${name} must be a size such as 1048576, 512kb or 1mb, got "${raw}"`);
    const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(m[2] ?? 'b').toLowerCase() as 'b'];
    return Math.floor(Number(m[1]) * unit);
  };
  return { type: 'size', defaultText: code(def), default: () => parse(def, 'default'), parse };
}

/** A body size as body-parser reads it (`50mb`, `64kb`, or bytes); an empty variable is the empty string. */
export function size(def: string): Reader<string> {
  return { type: 'size', defaultText: code(def), default: () => def, parse: (raw) => raw, keepsEmpty: true };
}

/** A directory, made absolute against the working directory at start. */
export function directory(def: string): Reader<string> {
  return {
    type: 'directory',
    defaultText: code(def),
    default: () => def,
    parse: (raw) => raw,
    finish: (value) => path.resolve(value),
  };
}

/** BASE_URL normalised: always ends with '/' (a missing one would give `.../apifhir/R4`). */
export function normaliseBaseUrl(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}

/** The public base URL: defaults to `http://localhost:<port>/` (the port after overrides), always ends with '/'. */
export function baseUrl(portKey: string): Reader<string> {
  return {
    type: 'URL',
    defaultText: '`http://localhost:PORT/`',
    default: () => '',
    parse: (raw) => raw,
    // Empty (unset, or an empty override): the default names the port, the overridden one included.
    finish: (value, settings) => normaliseBaseUrl(value || `http://localhost:${String(settings[portKey])}/`),
  };
}

/** A comma-separated list, items trimmed, empty items dropped; unset: the empty list. */
export function list(): Reader<string[]> {
  return {
    type: 'comma-separated list',
    defaultText: '(unset)',
    default: () => [],
    parse: (raw) =>
      raw
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
  };
}

/** Express's `trust proxy` as written: `true`/`false`, a hop count, or addresses/subnets (`loopback, 10.0.0.0/8`). */
export function trustProxy(): Reader<boolean | number | string> {
  return {
    type: '`true`, hops or addresses',
    defaultText: '(unset)',
    default: () => false,
    parse: (raw) => {
      if (raw === 'false') return false;
      if (raw === 'true') return true;
      if (/^\d+$/.test(raw)) return Number(raw);
      return raw;
    },
  };
}
