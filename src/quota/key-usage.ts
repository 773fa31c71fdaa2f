/**
 * @module quota/key-usage
 * The usage object a key holder sees (docs/contract.md, "Usage"): `GET /api/usage` and the MCP tool
 * `usage` answer with it, so both say the same thing.
 */
import type { QuotaState } from './quota-service.js';

export interface KeyUsage {
  readonly plan: string;
  readonly active: boolean;
  readonly limit: number;
  readonly used: number;
  readonly remaining: number;
  /** When the month's count starts again from zero (ISO 8601, UTC). */
  readonly resetsAt: string;
  /** Only when the plan has a per-minute limit. */
  readonly perMinute?: {
    readonly limit: number;
    readonly used: number;
    readonly remaining: number;
    readonly resetsAt: string;
  };
  /** Only when the plan has token budgets (docs/quota-and-limits.md, "Token budgets"). */
  readonly tokens?: {
    readonly monthly?: UsageWindow;
    readonly perMinute?: UsageWindow;
  };
}

interface UsageWindow {
  readonly limit: number;
  readonly used: number;
  readonly remaining: number;
  readonly resetsAt: string;
}

function windowOf(limit: number, used: number, endMs: number): UsageWindow {
  return {
    limit,
    used,
    remaining: Math.max(0, limit - used),
    resetsAt: new Date(endMs).toISOString(),
  };
}

export function keyUsage(
  key: { readonly plan: string; readonly active: boolean },
  state: QuotaState,
): KeyUsage {
  const { minute, tokens } = state;
  const tokenUsage =
    tokens === undefined
      ? {}
      : {
          tokens: {
            ...(tokens.monthly === undefined
              ? {}
              : {
                  monthly: windowOf(tokens.monthly.limit, tokens.monthly.used, state.window.endMs),
                }),
            ...(tokens.minute === undefined
              ? {}
              : {
                  perMinute: windowOf(tokens.minute.limit, tokens.minute.used, tokens.minute.endMs),
                }),
          },
        };
  return {
    plan: key.plan,
    active: key.active,
    limit: state.limit,
    used: state.used,
    remaining: Math.max(0, state.limit - state.used),
    resetsAt: new Date(state.window.endMs).toISOString(),
    ...(minute === undefined
      ? {}
      : {
          perMinute: {
            limit: minute.limit,
            used: minute.used,
            remaining: Math.max(0, minute.limit - minute.used),
            resetsAt: new Date(minute.endMs).toISOString(),
          },
        }),
    ...tokenUsage,
  };
}
