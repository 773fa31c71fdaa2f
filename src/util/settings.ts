/**
 * @module util/settings
 * How every `PLAUDER_*` setting is declared and read: one `Setting` per variable (its name,
 * its default as an operator writes it, and a zod schema with units and caps), and
 * `readSettings`, which parses a group of them in one pass and reports every problem at
 * once, one line per variable. `config/config.ts` and the cores' readers use the same
 * rules, and the table of docs/configuration.md is tested against the declared defaults.
 */
import { z } from 'zod';
import { parseDuration } from './duration.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** The longest delay `setTimeout` and `setInterval` take; a longer one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** A rule for one variable's text: what it becomes and what was expected when it fails. */
export interface Rule<T> {
  readonly schema: z.ZodType<T, string>;
  /** `expected …` in the problem line, e.g. "an integer from 1 to 1000". */
  readonly expected: string;
  /** Quote the value in the problem line (false for secrets and URLs with passwords). */
  readonly quote: boolean;
  /** Say the issue's own message instead of `expected` (URLs: what exactly is wrong). */
  readonly ownMessages?: boolean;
}

export interface Setting<T> {
  readonly name: string;
  /** The value when the variable is unset or blank, as an operator writes it; none = undefined. */
  readonly default: string | undefined;
  readonly rule: Rule<T>;
}

/** A setting with a default: always has a value. */
export function setting<T>(name: string, rule: Rule<T>, fallback: string): Setting<T> {
  return { name, default: fallback, rule };
}

/** A setting without a default: undefined when unset. */
export function optional<T>(name: string, rule: Rule<T>): Setting<T | undefined> {
  return { name, default: undefined, rule: rule as Rule<T | undefined> };
}

export function integer(min: number, max: number): Rule<number> {
  return {
    schema: z
      .string()
      .regex(/^[+-]?\d+$/)
      .transform(Number)
      .pipe(z.number().int().min(min).max(max)),
    expected: `an integer from ${min} to ${max}`,
    quote: true,
  };
}

/** A decimal number; `above` excludes the lower bound (0 < t ≤ 1). */
export function decimal(min: number, max: number, options: { above?: boolean } = {}): Rule<number> {
  const bounded = options.above ? z.number().gt(min).lte(max) : z.number().gte(min).lte(max);
  return {
    schema: z
      .string()
      .regex(/^[+-]?(\d+(\.\d+)?|\.\d+)$/)
      .transform(Number)
      .pipe(bounded),
    expected: options.above
      ? `a number greater than ${min} and at most ${max}`
      : `a number from ${min} to ${max}`,
    quote: true,
  };
}

/**
 * A duration such as `500ms`, `30s`, `15m`, `24h` or `7d`, in milliseconds. Delays that a
 * timer waits for are capped at `MAX_TIMER_MS` (24.8 days), the default cap.
 */
export function duration(
  options: { min?: number; max?: number; example?: string } = {},
): Rule<number> {
  const { min = 1, max = MAX_TIMER_MS, example = '500ms, 30s, 15m or 24h' } = options;
  return {
    schema: z
      .string()
      .transform((text) => parseDuration(text) ?? Number.NaN)
      .pipe(z.number().int().min(min).max(max)),
    expected: `a duration such as ${example}, from ${formatMs(min)} to ${formatMs(max)}`,
    quote: true,
  };
}

export function oneOf<const T extends string>(values: readonly [T, ...T[]]): Rule<T> {
  return {
    schema: z.enum(values),
    expected: `one of ${values.join(', ')}`,
    quote: true,
  };
}

export function text(): Rule<string> {
  return { schema: z.string(), expected: 'text', quote: true };
}

/**
 * An http(s) URL without credentials (they would end up in logs) or #fragment, as
 * `URL.href`. The value is never quoted: it may hold a password.
 */
export function httpUrl(example: string, credentialsHint = ''): Rule<string> {
  return {
    schema: z
      .string()
      .refine((value) => URL.canParse(value), `is not a valid URL (${example})`)
      .transform((value) => new URL(value))
      .refine((url) => url.protocol === 'http:' || url.protocol === 'https:', {
        message: 'must use http or https',
        abort: true,
      })
      .refine((url) => url.username === '' && url.password === '', {
        message: `must not contain credentials${credentialsHint}`,
        abort: true,
      })
      .refine((url) => url.hash === '', { message: 'must not contain a #fragment', abort: true })
      .transform((url) => url.href),
    expected: `an http:// or https:// URL (${example})`,
    quote: false,
    ownMessages: true,
  };
}

/** Any other check: `test` decides, `expected` says what it wanted. */
export function matching(
  expected: string,
  test: (value: string) => boolean,
  options: { quote?: boolean } = {},
): Rule<string> {
  return { schema: z.string().refine(test), expected, quote: options.quote ?? true };
}

type Values<S extends Record<string, Setting<unknown>>> = {
  -readonly [K in keyof S]: S[K] extends Setting<infer T> ? T : never;
};

/**
 * Reads `settings` from `env` with one zod schema: blank counts as unset, unset takes the
 * default. Each invalid variable adds one line to `problems` and reads as its default, so
 * the caller can go on checking and report everything at once.
 */
export function readSettings<S extends Record<string, Setting<unknown>>>(
  env: Env,
  settings: S,
  problems: string[],
): Values<S> {
  const entries = Object.entries(settings);
  const raw = (name: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const shape = Object.fromEntries(
    entries.map(([, s]) => {
      const schema = s.default === undefined ? s.rule.schema.optional() : s.rule.schema;
      return [s.name, schema];
    }),
  );
  const input = Object.fromEntries(entries.map(([, s]) => [s.name, raw(s.name) ?? s.default]));
  const result = z.object(shape).safeParse(input);
  const output: Record<string, unknown> = result.success ? result.data : {};
  if (!result.success) {
    const failed = new Set<string>();
    for (const issue of result.error.issues) {
      const name = String(issue.path[0]);
      if (failed.has(name)) continue;
      failed.add(name);
      const spec = entries.find(([, s]) => s.name === name)?.[1];
      if (spec) problems.push(problemLine(spec, issue.message, input[name]));
    }
    // The valid ones still count; the invalid ones read as their default.
    for (const [, s] of entries) {
      if (failed.has(s.name)) {
        output[s.name] = s.default === undefined ? undefined : parseDefault(s);
      } else {
        output[s.name] = s.rule.schema.optional().parse(input[s.name]);
      }
    }
  }
  return Object.fromEntries(entries.map(([key, s]) => [key, output[s.name]])) as Values<S>;
}

function problemLine(spec: Setting<unknown>, message: string, value: string | undefined): string {
  if (spec.rule.ownMessages) return `${spec.name} ${message}.`;
  const got = spec.rule.quote ? `, got "${String(value).slice(0, 80)}"` : '';
  return `${spec.name}: expected ${spec.rule.expected}${got}`;
}

function parseDefault(spec: Setting<unknown>): unknown {
  const parsed = spec.rule.schema.safeParse(spec.default);
  // A default that breaks its own rule is a programming error; a test checks every one.
  if (!parsed.success) throw new Error(`${spec.name}: the default "${spec.default}" is invalid`);
  return parsed.data;
}

/** A whole number of milliseconds as an operator writes it: `30000` → `30s`, `250` → `250ms`. */
export function durationText(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'm'],
    [1000, 's'],
  ];
  for (const [size, unit] of units) if (ms > 0 && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** `86400000` → `1d`, `2147483647` → `24.8d`: caps said the way durations are written. */
function formatMs(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'm'],
    [1000, 's'],
  ];
  for (const [size, unit] of units) {
    if (ms >= size) return `${Math.floor((ms / size) * 10) / 10}${unit}`;
  }
  return `${ms}ms`;
}
