// Configuration is read from the environment it is given (no hidden process.env reads), normalised after overrides
// too, strict about booleans, frozen, and refuses the documented default secrets under NODE_ENV=production.
// Before: BOT_JOB_RUNNER=flase meant false, an override `baseUrl: 'http://x/api'` stayed without its slash (so
// links read `http://x/apifhir/R4`), the config could be changed after start, and production took the defaults.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  DEFAULT_ADMIN_PASSWORD,
  DEFAULT_CLIENT_SECRET,
  fhirBaseUrl,
  loadConfig,
} from '../src/config.js';
import { SETTINGS, VARIABLES } from '../src/config/settings.js';
import { PAGE, renderPage } from '../scripts/config-docs.js';
import { startServerProcess } from './helpers/processes.js';
import { useTestServer } from './helpers/server.js';

describe('loadConfig(env)', () => {
  it('reads only the environment it is given', () => {
    const saved = process.env.BOT_JOB_RUNNER;
    process.env.BOT_JOB_RUNNER = 'not-a-boolean';
    try {
      const config = loadConfig({ PORT: '9001' });
      expect(config.port).toBe(9001);
      expect(config.botJobRunner).toBe(true);
      expect(config.baseUrl).toBe('http://localhost:9001/');
    } finally {
      if (saved === undefined) delete process.env.BOT_JOB_RUNNER;
      else process.env.BOT_JOB_RUNNER = saved;
    }
  });

  it('gives the base URL a trailing slash, from the environment and from overrides alike', () => {
    expect(loadConfig({ BASE_URL: 'https://example.org/api' }).baseUrl).toBe('https://example.org/api/');
    const overridden = loadConfig({}, { overrides: { baseUrl: 'https://example.org/api' } });
    expect(overridden.baseUrl).toBe('https://example.org/api/');
    expect(fhirBaseUrl(overridden)).toBe('https://example.org/api/fhir/R4');
    // The default follows an overridden port.
    expect(loadConfig({ PORT: '1' }, { overrides: { port: 8200 } }).baseUrl).toBe('http://localhost:8200/');
  });

  it('takes true/false, 1/0, yes/no, on/off for booleans and refuses anything else, naming the setting', () => {
    expect(loadConfig({ BOT_JOB_RUNNER: 'FALSE' }).botJobRunner).toBe(false);
    expect(loadConfig({ BOT_JOB_RUNNER: 'off' }).botJobRunner).toBe(false);
    expect(loadConfig({ BOT_JOB_RUNNER: '0' }).botJobRunner).toBe(false);
    expect(loadConfig({ BOT_FETCH_ALLOW_PRIVATE: 'yes' }).botFetchAllowPrivate).toBe(true);
    expect(() => loadConfig({ BOT_JOB_RUNNER: 'flase' })).toThrow(ConfigError);
    expect(() => loadConfig({ BOT_JOB_RUNNER: 'flase' })).toThrow(
      /BOT_JOB_RUNNER must be true or false.*"flase"/,
    );
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT must be a non-negative integer/);
  });

  it('is frozen, nested settings included', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => {
      (config as { baseUrl: string }).baseUrl = 'http://elsewhere/';
    }).toThrow(TypeError);
    expect(() => {
      (config.graphql as { maxDepth: number }).maxDepth = 1000;
    }).toThrow(TypeError);
    expect(Object.isFrozen(config.corsOrigins)).toBe(true);
  });

  it('refuses the default admin password and client secret under NODE_ENV=production, naming both', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/ADMIN_PASSWORD and CLIENT_SECRET/);
    expect(() => loadConfig({ NODE_ENV: 'production', ADMIN_PASSWORD: 'x-secret-1' })).toThrow(
      /default CLIENT_SECRET:/,
    );
    expect(() =>
      loadConfig({ NODE_ENV: 'production', ADMIN_PASSWORD: DEFAULT_ADMIN_PASSWORD, CLIENT_SECRET: 's' }),
    ).toThrow(/default ADMIN_PASSWORD:/);
    const ok = loadConfig({ NODE_ENV: 'production', ADMIN_PASSWORD: 'a-secret', CLIENT_SECRET: 'b-secret' });
    expect(ok.adminPassword).toBe('a-secret');
    // `npm start` defaults NODE_ENV to production; the documented first-start defaults still work there.
    expect(loadConfig({ NODE_ENV: 'production' }, { productionDefaulted: true }).clientSecret).toBe(
      DEFAULT_CLIENT_SECRET,
    );
    // Outside production the defaults are fine.
    expect(loadConfig({ NODE_ENV: 'development' }).adminPassword).toBe(DEFAULT_ADMIN_PASSWORD);
  });
});

describe('the settings table', () => {
  it('gives every variable a type, a default and a line of documentation, each name and key once', () => {
    const names = VARIABLES.map((v) => v.env);
    expect(new Set(names).size).toBe(names.length);
    const keys = SETTINGS.map((s) => s.key);
    expect(new Set(keys).size).toBe(keys.length);
    for (const v of VARIABLES) {
      const [type, def] = 'read' in v ? [v.read.type, v.read.defaultText] : [v.type, v.defaultText];
      expect(v.env).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(type, v.env).not.toBe('');
      expect(def, v.env).not.toBe('');
      expect(v.doc.trim(), v.env).not.toBe('');
    }
  });

  it('is the whole Config: each key comes from one entry and unset variables give its default', () => {
    const config = loadConfig({});
    const { defaulted, ...settings } = config;
    // A Config object (graphql, loginThrottle, ...) holds `group.key` settings; a list is one setting.
    const configKeys = Object.entries(settings).flatMap(([k, v]) =>
      v && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v).map((f) => `${k}.${f}`) : [k],
    );
    expect(configKeys.sort()).toEqual(SETTINGS.map((s) => s.key).sort());
    expect(Object.keys(defaulted).sort()).toEqual(
      SETTINGS.filter((s) => s.shownAtFirstStart)
        .map((s) => s.key)
        .sort(),
    );
    const all = config as unknown as Record<string, unknown>;
    for (const s of SETTINGS.filter((s) => !s.read.finish)) {
      const [group, field] = s.key.split('.');
      const value = field ? (all[group] as Record<string, unknown>)[field] : all[group];
      expect(value, s.env).toEqual(s.read.default({}));
    }
  });

  it('names every environment variable the source reads', () => {
    const read = new Set<string>();
    const walk = (dir: string): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory() && entry.name !== 'generated') walk(file);
        else if (entry.name.endsWith('.ts')) {
          for (const m of fs.readFileSync(file, 'utf8').matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g))
            read.add(m[1]);
        }
      }
    };
    walk(path.resolve(import.meta.dirname, '../src'));
    expect(read.size).toBeGreaterThan(0);
    const declared = new Set(VARIABLES.map((v) => v.env));
    expect([...read].filter((name) => !declared.has(name))).toEqual([]);
  });

  it('is documented by docs/configuration.md, generated from it', async () => {
    const current = fs.readFileSync(PAGE, 'utf8');
    const generated = await renderPage(current);
    expect(current === generated, 'docs/configuration.md is out of date: run `npm run docs:config`').toBe(
      true,
    );
  });
});

describe('a server started on port 0', () => {
  const server = useTestServer();
  // In a hook (its timeout is 120 s): starting a server takes 20-30 s on a loaded machine.

  it('names its real port in BASE_URL and in FHIR links (the frozen config is loaded after binding)', async () => {
    const port = new URL(server.base).port;
    expect(server.services.config.baseUrl).toBe(`http://localhost:${port}/`);
    expect(server.services.config.port).toBe(Number(port));
    const r = await fetch(`${server.base}fhir/R4/metadata`);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { implementation?: { url?: string } };
    expect(body.implementation?.url).toBe(`http://localhost:${port}/fhir/R4`);
  });
});

describe('the server process', () => {
  it('exits at start with a one-line error naming a bad setting', { timeout: 120_000 }, async () => {
    const err = await startServerProcess({ env: { BOT_JOB_RUNNER: 'flase' }, timeoutMs: 100_000 }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/exited before it was ready/);
    expect(err?.message).toMatch(/Configuration error: BOT_JOB_RUNNER must be true or false.*"flase"/);
    expect(err?.message).not.toMatch(/at loadConfig/);
  });

  it('refuses NODE_ENV=production with the default secrets', { timeout: 120_000 }, async () => {
    const err = await startServerProcess({
      env: {
        NODE_ENV: 'production',
        ADMIN_PASSWORD: DEFAULT_ADMIN_PASSWORD,
        CLIENT_SECRET: DEFAULT_CLIENT_SECRET,
      },
      timeoutMs: 100_000,
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(
      /Configuration error: NODE_ENV=production refuses .*ADMIN_PASSWORD and CLIENT_SECRET/,
    );
  });
});
