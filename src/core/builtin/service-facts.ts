/**
 * @module core/builtin/service-facts
 * What the built-in core states about the service it runs in, taken from the running
 * configuration instead of being written into the knowledge base by hand: the plans and
 * their limits, the quota's time zone, how long sessions are kept, the memory window, the
 * longest message, how long idempotent answers are kept and how many requests a key may
 * have in flight. Answers refer to them with placeholders (`{plan-limit}`,
 * `{timezone}`, ...; see `knowledge/answer-template.ts` and `knowledge/README.md`).
 *
 * The facts are read from the same environment variables, with the same parsers and
 * defaults, as `config/config.ts` (a test keeps the two in step). Invalid values are
 * reported by the configuration; here they fall back to the defaults.
 */
import { DEFAULT_PLANS, parsePlans } from '../../plans/plans.js';
import { parseDuration } from '../../util/duration.js';

export interface PlanFacts {
  readonly name: string;
  /** Requests per calendar month. */
  readonly monthly: number;
  /** Requests per clock minute, when the plan has a per-minute limit. */
  readonly perMinute?: number;
}

export interface ServiceFacts {
  /** In the configured order. */
  readonly plans: readonly PlanFacts[];
  /** IANA time zone of the monthly window. */
  readonly quotaTimeZone: string;
  readonly sessionTtlMs: number;
  /** Earlier turns the core receives per session. */
  readonly sessionWindow: number;
  readonly messageMaxChars: number;
  /** How long the answer to a request with an `Idempotency-Key` is replayed. */
  readonly idempotencyTtlMs: number;
  /** Chat requests one key may have in flight at once. */
  readonly keyConcurrency: number;
}

export const DEFAULT_SERVICE_FACTS: ServiceFacts = Object.freeze({
  plans: Object.freeze([
    { name: 'standard', monthly: 1000 },
    { name: 'plus', monthly: 5000 },
  ]),
  quotaTimeZone: 'UTC',
  sessionTtlMs: 30 * 86_400_000,
  sessionWindow: 20,
  messageMaxChars: 4000,
  idempotencyTtlMs: 24 * 3_600_000,
  keyConcurrency: 16,
});

type Env = Readonly<Record<string, string | undefined>>;

function integer(raw: string | undefined, fallback: number): number {
  return raw !== undefined && /^\d+$/.test(raw.trim()) ? Number(raw) : fallback;
}

function timeZone(raw: string | undefined): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: raw || 'UTC' }).resolvedOptions().timeZone;
  } catch {
    return 'UTC';
  }
}

/** The facts of the service configured by `env` (the server's and the CLI's environment). */
export function readServiceFacts(env: Env): ServiceFacts {
  const parsed = parsePlans(env.PLAUDER_PLANS || DEFAULT_PLANS);
  const plans = parsed.ok ? parsed.plans : (parsePlans(DEFAULT_PLANS).plans ?? new Map());
  return Object.freeze({
    plans: Object.freeze(
      [...plans].map(
        ([name, plan]): PlanFacts => ({
          name,
          monthly: plan.monthly,
          ...(plan.perMinute === undefined ? {} : { perMinute: plan.perMinute }),
        }),
      ),
    ),
    quotaTimeZone: timeZone(env.PLAUDER_QUOTA_TIMEZONE),
    sessionTtlMs:
      parseDuration(env.PLAUDER_SESSION_TTL || '30d') ?? DEFAULT_SERVICE_FACTS.sessionTtlMs,
    sessionWindow: integer(env.PLAUDER_SESSION_WINDOW, DEFAULT_SERVICE_FACTS.sessionWindow),
    messageMaxChars: integer(env.PLAUDER_MESSAGE_MAX_CHARS, DEFAULT_SERVICE_FACTS.messageMaxChars),
    idempotencyTtlMs:
      parseDuration(env.PLAUDER_IDEMPOTENCY_TTL || '24h') ?? DEFAULT_SERVICE_FACTS.idempotencyTtlMs,
    keyConcurrency: integer(env.PLAUDER_KEY_CONCURRENCY, DEFAULT_SERVICE_FACTS.keyConcurrency),
  });
}
