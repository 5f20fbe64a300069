// Every setting, read from an environment given by the caller (main.ts passes process.env), with its default. The
// settings are declared once, in the table of src/config/settings.ts: the Config type below is derived from it,
// loadConfig reads it, and docs/configuration.md is generated from it. The result is frozen: settings do not
// change while the server runs.
import { ConfigError, type Env, type Reader } from './config/readers.js';
import { DEFAULT_ADMIN_PASSWORD, DEFAULT_CLIENT_SECRET, SETTINGS, TOPICS } from './config/settings.js';

export { ConfigError, normaliseBaseUrl, type Env } from './config/readers.js';
export { DEFAULT_ADMIN_PASSWORD, DEFAULT_CLIENT_SECRET };

/** Path of the FHIR R4 base under BASE_URL (no slashes at either end). */
export const FHIR_PATH = 'fhir/R4';

/** The FHIR base URL `{BASE_URL}fhir/R4` (no trailing slash), as every absolute FHIR link is built. */
export function fhirBaseUrl(config: Pick<Config, 'baseUrl'>): string {
  return `${config.baseUrl}${FHIR_PATH}`;
}

// The Config type, from the table: a setting's key and reader give its name and type; `group.key` settings make
// the Config objects (graphql, loginThrottle, ...); a reader that may give undefined makes an optional key.
type Setting = Extract<(typeof TOPICS)[number]['settings'][number], { key: string }>;
type ValueOf<S extends Setting> = S['read'] extends Reader<infer T> ? T : never;
type TopKey<S extends Setting> = S['key'] extends `${string}.${string}` ? never : S['key'];
type GroupOf<K> = K extends `${infer G}.${string}` ? G : never;
type Plain = { [S in Setting as undefined extends ValueOf<S> ? never : TopKey<S>]: ValueOf<S> };
type Optional = {
  [S in Setting as undefined extends ValueOf<S> ? TopKey<S> : never]?: Exclude<ValueOf<S>, undefined>;
};
type Groups = {
  [G in GroupOf<Setting['key']>]: {
    [S in Setting as S['key'] extends `${G}.${infer F}` ? F : never]: ValueOf<S>;
  };
};
/** True for each setting shown at first start whose variable was unset or empty (its default was used). */
type Defaulted = { [S in Setting as S extends { shownAtFirstStart: true } ? S['key'] : never]: boolean };
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The server's settings (one key per entry of the settings table, plus `defaulted`). */
export type Config = Simplify<Plain & Optional & Groups & { defaulted: Defaulted }>;

/** Failure limits of a throttled check within a window of windowSec seconds. */
export type ThrottleSettings = Config['loginThrottle'];

/** How loadConfig treats its input besides the environment. */
export interface LoadOptions {
  /** Settings that win over the environment (tests); normalised like the environment's. */
  overrides?: Partial<Config>;
  /** True when NODE_ENV=production was not set by the operator but defaulted by main.ts (production-env.ts): the
   * documented first-start secrets stay allowed, so `npm install && npm start` works on a fresh clone. */
  productionDefaulted?: boolean;
}

/** Reads the configuration from `env`, applies overrides, normalises, validates and freezes it. Throws
 * ConfigError naming the setting when a value is invalid. */
export function loadConfig(env: Env, opts: LoadOptions = {}): Readonly<Config> {
  const config = normalise({ ...fromEnv(env), ...opts.overrides });
  if (env.NODE_ENV === 'production' && !opts.productionDefaulted) refuseDefaultSecrets(config, env);
  return deepFreeze(config as Config);
}

/** A Config under construction, by key (the table builds it one setting at a time). */
type Draft = Record<string, unknown>;

/** The value at `key` (`group.key` inside a Config object). */
function get(config: Draft, key: string): unknown {
  const [group, field] = key.split('.');
  return field === undefined ? config[group] : (config[group] as Draft | undefined)?.[field];
}

/** Sets `key`, copying a Config object rather than changing it (an override's object belongs to the caller). */
function put(config: Draft, key: string, value: unknown): void {
  const [group, field] = key.split('.');
  if (field === undefined) config[group] = value;
  else config[group] = { ...(config[group] as Draft | undefined), [field]: value };
}

/** The configuration the environment alone describes. */
function fromEnv(env: Env): Draft {
  const config: Draft = {};
  const defaulted: Record<string, boolean> = {};
  for (const s of SETTINGS) {
    const raw = env[s.env];
    const unset = raw === undefined || (raw === '' && !s.read.keepsEmpty);
    put(config, s.key, unset ? s.read.default(env) : s.read.parse(raw, s.env));
    if (s.shownAtFirstStart) defaulted[s.key] = !raw;
  }
  config.defaulted = defaulted;
  return config;
}

/** Normalisation applied after overrides, so an override is held to the same form as an environment value
 * (BASE_URL's default names the port, the overridden one included; DATA_DIR is made absolute). */
function normalise(config: Draft): Draft {
  const out = { ...config };
  for (const s of SETTINGS) if (s.read.finish) put(out, s.key, s.read.finish(get(out, s.key), out));
  return out;
}

/** NODE_ENV=production: the documented default admin password and client secret are public knowledge. */
function refuseDefaultSecrets(config: Draft, env: Env): void {
  const bad = SETTINGS.filter((s) => s.secret && get(config, s.key) === s.read.default(env)).map(
    (s) => s.env,
  );
  if (bad.length > 0) {
    throw new ConfigError(
      `NODE_ENV=production refuses the documented default ${bad.join(' and ')}: set ${bad.length > 1 ? 'them' : 'it'} ` +
        'to a secret of your own (docs/configuration.md)',
    );
  }
}

/** Freezes an object and everything it holds (config is read by many modules; none may change it). */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
