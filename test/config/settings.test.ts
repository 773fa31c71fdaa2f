/**
 * The settings reader: units and caps, every problem at once, and the configuration
 * table of docs/configuration.md against the declared settings.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALL_SETTINGS, ConfigError, loadConfig } from '../../src/config/config.js';
import { MAX_TIMER_MS, readSettings } from '../../src/util/settings.js';

const base = { PLAUDER_DATABASE_URL: 'sqlite::memory:' };

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig({ ...base, ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('durations', () => {
  it('refuses a timer longer than 2^31-1 ms instead of letting it fire at once', () => {
    expect(
      problemsOf({ PLAUDER_SESSION_SWEEP_INTERVAL: '30d', PLAUDER_CORE_TIMEOUT: '25d' }),
    ).toEqual([
      expect.stringMatching(
        /^PLAUDER_SESSION_SWEEP_INTERVAL: expected a duration .* to 24\.8d, got "30d"$/,
      ),
      expect.stringMatching(/^PLAUDER_CORE_TIMEOUT: expected a duration .* to 24\.8d, got "25d"$/),
    ]);
    const longest = loadConfig({ ...base, PLAUDER_CORE_TIMEOUT: `${MAX_TIMER_MS}ms` });
    expect(longest.coreTimeoutMs).toBe(MAX_TIMER_MS);
    expect(problemsOf({ PLAUDER_CORE_TIMEOUT: `${MAX_TIMER_MS + 1}ms` })).toHaveLength(1);
  });

  it('caps every timer setting of the cores and the webhook sender as well', () => {
    for (const name of [
      'PLAUDER_WEBHOOK_POLL_INTERVAL',
      'PLAUDER_WEBHOOK_TIMEOUT',
      'PLAUDER_REQUEST_TIMEOUT',
      'PLAUDER_KEEP_ALIVE_TIMEOUT',
    ]) {
      expect(problemsOf({ [name]: '25d' }), name).toEqual([expect.stringContaining(name)]);
    }
    expect(
      problemsOf({
        PLAUDER_CORE: 'rasa',
        PLAUDER_RASA_URL: 'http://127.0.0.1:5005',
        PLAUDER_RASA_RETRY_MAX_DELAY: '25d',
      }),
    ).toEqual([expect.stringContaining('PLAUDER_RASA_RETRY_MAX_DELAY')]);
  });

  it('keeps TTLs beyond a timer: they are compared with timestamps, not waited for', () => {
    expect(loadConfig({ ...base, PLAUDER_SESSION_TTL: '90d' }).sessionTtlMs).toBe(90 * 86_400_000);
    expect(problemsOf({ PLAUDER_SESSION_TTL: '0s' })).toHaveLength(1);
  });
});

describe('every problem at once', () => {
  it('lists integers, enums, durations, URLs and cross-field rules together', () => {
    const problems = problemsOf({
      PORT: '70000',
      PLAUDER_SESSION_WINDOW: '-1',
      PLAUDER_MESSAGE_MAX_CHARS: '1.5',
      PLAUDER_LOG_LEVEL: 'loud',
      PLAUDER_CORE: 'eliza',
      PLAUDER_MAX_CONNECTIONS: '0',
      PLAUDER_HEADERS_TIMEOUT: '1m',
      PLAUDER_REQUEST_TIMEOUT: '30s',
      PLAUDER_WEBHOOK_URL: 'ftp://x',
    });
    expect(problems).toEqual([
      'PORT: expected an integer from 0 to 65535, got "70000"',
      'PLAUDER_SESSION_WINDOW: expected an integer from 0 to 1000, got "-1"',
      'PLAUDER_MESSAGE_MAX_CHARS: expected an integer from 1 to 1000000, got "1.5"',
      'PLAUDER_MAX_CONNECTIONS: expected an integer from 1 to 1000000, got "0"',
      'PLAUDER_CORE: expected one of builtin, openai, rasa, placeholder, got "eliza"',
      'PLAUDER_LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"',
      'PLAUDER_WEBHOOK_URL: expected an http:// or https:// URL, got "ftp://x"',
      'PLAUDER_WEBHOOK_SECRET: required with PLAUDER_WEBHOOK_URL (make one with: plauder webhooks secret)',
      'PLAUDER_HEADERS_TIMEOUT: expected at most PLAUDER_REQUEST_TIMEOUT',
    ]);
  });

  it('reads the connection limits with their defaults', () => {
    expect(loadConfig(base).limits).toEqual({
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 10_000,
      streamStallTimeoutMs: 30_000,
      keyConcurrency: 16,
      keyQueue: 256,
      keyQueueTimeoutMs: 30_000,
    });
  });

  it('accepts every declared default under its own rule', () => {
    for (const setting of ALL_SETTINGS) {
      if (setting.default === undefined) continue;
      const problems: string[] = [];
      readSettings({ [setting.name]: setting.default }, { value: setting }, problems);
      expect(problems, setting.name).toEqual([]);
    }
  });
});

const CONFIGURATION = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

/** The configuration table: first cell's names (with `_SUFFIX` shorthands) → default cell. */
function documentedDefaults(): Map<string, string> {
  const table = CONFIGURATION;
  const known = new Set(ALL_SETTINGS.map((s) => s.name));
  const rows = new Map<string, string>();
  for (const line of table.split('\n')) {
    const cells = line.split(' | ').map((cell) => cell.replace(/^\|\s*|\s*\|$/g, '').trim());
    if (cells.length < 3 || !cells[0]?.startsWith('`')) continue;
    const written = [...(cells[0] ?? '').matchAll(/`([A-Z_]+)`/g)].map((m) => m[1] as string);
    const first = written[0] ?? '';
    const names = written.map((name) => {
      if (!name.startsWith('_')) return name;
      // `PLAUDER_OPENAI_TEMPERATURE` / `_MAX_TOKENS`: the shorthand replaces a tail of the first.
      const parts = first.split('_');
      for (let keep = parts.length - 1; keep > 0; keep--) {
        const candidate = `${parts.slice(0, keep).join('_')}${name}`;
        if (known.has(candidate)) return candidate;
      }
      return `${first}?${name}`;
    });
    const defaults = (cells[1] ?? '').split(' / ');
    names.forEach((name, i) => {
      rows.set(name, (defaults.length === names.length ? defaults[i] : cells[1]) ?? '');
    });
  }
  return rows;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const file = path.join(dir, entry);
    return statSync(file).isDirectory() ? sourceFiles(file) : file.endsWith('.ts') ? [file] : [];
  });
}

describe('the configuration table of docs/configuration.md', () => {
  const documented = documentedDefaults();

  it('documents every setting with the default it has', () => {
    expect(documented.size).toBeGreaterThan(40);
    for (const setting of ALL_SETTINGS) {
      expect(
        documented.has(setting.name),
        `${setting.name} is missing from docs/configuration.md`,
      ).toBe(true);
      if (setting.default !== undefined) {
        expect(documented.get(setting.name), setting.name).toContain(`\`${setting.default}\``);
      }
    }
  });

  it('documents nothing the service does not read', () => {
    const declared = new Set(ALL_SETTINGS.map((s) => s.name));
    for (const name of documented.keys()) expect(declared, name).toContain(name);
  });

  it('declares every PLAUDER_ variable the source reads', () => {
    const declared = ALL_SETTINGS.map((s) => s.name);
    const src = fileURLToPathOf('../../src');
    for (const file of sourceFiles(src)) {
      for (const [name] of readFileSync(file, 'utf8').matchAll(/\bPLAUDER_[A-Z0-9_]*[A-Z0-9]\b/g)) {
        // A prefix such as PLAUDER_OPENAI that names its group's settings.
        const known = declared.some((d) => d === name || d.startsWith(`${name}_`));
        expect(known, `${name} in ${file}`).toBe(true);
      }
    }
  });
});

function fileURLToPathOf(relative: string): string {
  return new URL(relative, import.meta.url).pathname;
}
