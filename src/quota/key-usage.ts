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
}

export function keyUsage(
  key: { readonly plan: string; readonly active: boolean },
  state: QuotaState,
): KeyUsage {
  const { minute } = state;
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
  };
}
