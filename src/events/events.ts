/**
 * @module events/events
 * The events an operator's systems receive (docs/contract.md, "Events") and their JSON bodies:
 * `{"type", "timestamp", "data": {"keyId", "name", "plan", ...}}`. Nothing in them is
 * secret (no key, no hash) and no message text is ever part of one.
 */

/** Which key an event is about, as it was when the event happened. */
export interface KeyRef {
  readonly keyId: string;
  readonly name: string;
  readonly plan: string;
}

export type PlauderEvent =
  | {
      readonly type: 'quota.warning' | 'quota.exhausted';
      readonly data: KeyRef & {
        readonly month: string;
        readonly used: number;
        readonly limit: number;
        /** `tokens` for a token budget's events; absent = requests. */
        readonly unit?: 'tokens';
      };
    }
  | { readonly type: 'key.created'; readonly data: KeyRef & { readonly active: boolean } }
  | {
      readonly type: 'key.rotated';
      readonly data: KeyRef & { readonly previousKeyExpiresAt: string };
    }
  | { readonly type: 'key.revoked'; readonly data: KeyRef }
  | {
      readonly type: 'key.updated';
      readonly data: KeyRef & {
        readonly active: boolean;
        /** The values before the change, of the fields that changed. */
        readonly previous: {
          readonly name?: string;
          readonly plan?: string;
          readonly active?: boolean;
        };
      };
    };

/** Every event type, once: the admin API's schema lists these (the compiler keeps them complete). */
const TYPES: Readonly<Record<PlauderEvent['type'], true>> = {
  'quota.warning': true,
  'quota.exhausted': true,
  'key.created': true,
  'key.rotated': true,
  'key.revoked': true,
  'key.updated': true,
};

export const EVENT_TYPES = Object.keys(TYPES) as ReadonlyArray<PlauderEvent['type']>;

/** The share of the monthly limit at which `quota.warning` is sent. */
const WARNING_SHARE = 0.8;

/** The count whose reservation sends `quota.warning`: 80 % of the limit, rounded up. */
export function warningAt(limit: number): number {
  return Math.max(1, Math.ceil(limit * WARNING_SHARE));
}

/**
 * A quota event is sent once per key and month, whichever instance counted the request
 * that crossed the line, and however often refunds move the count back below it.
 */
export function dedupeKeyOf(event: PlauderEvent): string | null {
  if (event.type !== 'quota.warning' && event.type !== 'quota.exhausted') return null;
  const unit = event.data.unit === undefined ? '' : `:${event.data.unit}`;
  return `${event.type}:${event.data.keyId}:${event.data.month}${unit}`;
}

/** The body that is signed and sent, the same bytes on every attempt. */
export function eventBody(event: PlauderEvent, nowMs: number): string {
  return JSON.stringify({
    type: event.type,
    timestamp: new Date(nowMs).toISOString(),
    data: event.data,
  });
}

/** Where an event is in the outbox (its table row stays inside storage). */
export type { EventStatus } from '../storage/repositories/events-repository.js';
