/**
 * @module storage/schema
 * Table types for Kysely. Timestamps are Unix milliseconds; booleans are 0/1 integers,
 * so one schema serves every dialect.
 */
import type { StoredSealed } from './sealed-column.js';

export interface ApiKeysTable {
  id: string;
  name: string;
  plan: string;
  active: number;
  created_at: number;
  updated_at: number;
  revoked_at: number | null;
}

/** One row per secret of a key: the current one, and old ones inside a rotation grace. */
interface KeySecretsTable {
  /** SHA-256 hex of the whole key. */
  hash: string;
  key_id: string;
  display_prefix: string;
  created_at: number;
  /** null = valid until rotated; else valid while now < expires_at. */
  expires_at: number | null;
}

interface UsageTable {
  key_id: string;
  /** Calendar month in the quota time zone, `YYYY-MM`. */
  month: string;
  used: number;
  /** The clock minute (Unix ms / 60 000) that `minute_used` counts. */
  minute: number;
  /** Requests counted in `minute` (the per-minute limit). */
  minute_used: number;
  /** The clock minute that `hangups` counts (migration 002). */
  hangup_minute: number;
  /** Hang-ups before delivery in `hangup_minute`: the first `PLAUDER_FREE_HANGUPS` are refunded. */
  hangups: number;
}

/** Requests per key and calendar day in the quota time zone (the days of `usage`'s months). */
interface UsageDaysTable {
  key_id: string;
  /** `YYYY-MM-DD` in the quota time zone. */
  day: string;
  used: number;
}

/** Tokens per key and month, settled and reserved (docs/quota-and-limits.md, "Token budgets"). */
interface TokenUsageTable {
  key_id: string;
  /** Calendar month in the quota time zone, `YYYY-MM`. */
  month: string;
  used: number;
  /** The clock minute (Unix ms / 60 000) that `minute_used` counts. */
  minute: number;
  minute_used: number;
}

/** A turn's open token reservation: settled by its turn, or released by a sweep once expired. */
interface TokenReservationsTable {
  id: string;
  key_id: string;
  month: string;
  minute: number;
  tokens: number;
  expires_at: number;
}

interface SessionsTable {
  key_id: string;
  /** HMAC of the client's sessionId: the id itself is not stored. */
  session_hash: string;
  created_at: number;
  last_active_at: number;
  /** Number of turns ever appended; each write of the window increments it. */
  turn_count: number;
  /**
   * AES-256-GCM sealed JSON of the memory window, bound to key, session and `turn_count`: its
   * bytes, or their base64url text (sealed-column.ts). Null only inside the transaction
   * that creates the row for its first turn.
   */
  sealed_window: StoredSealed | null;
}

/** Outcomes of requests sent with an `Idempotency-Key`, and claims of those still running. */
interface IdempotencyKeysTable {
  key_id: string;
  /** HMAC of the client's Idempotency-Key within this API key. */
  key_hash: string;
  /** HMAC of the endpoint and the request body the key was first used with. */
  fingerprint: string;
  /** Random id of the request that claimed the key; only it may complete or release it. */
  claim: string;
  /**
   * AES-256-GCM sealed JSON of the kept outcome, as bytes or base64url text
   * (sealed-column.ts); null while the first request runs.
   */
  outcome: StoredSealed | null;
  /** Running: the end of the claim's lease. Kept: the end of the TTL. Unix ms. */
  expires_at: number;
  /**
   * The quota unit the claim's request reserved: its month (`YYYY-MM`), clock minute and
   * day (`YYYY-MM-DD`); null while it has reserved none.
   */
  unit_month: string | null;
  unit_minute: number | null;
  unit_day: string | null;
}

/** Kept response objects of `POST /v1/responses`, each with the conversation it belongs to. */
interface ResponsesTable {
  key_id: string;
  /** Keyed hash of the response id (`resp_…`): the id itself is not stored. */
  id_hash: string;
  /** The `session_hash` of the conversation the response is a turn of. */
  conversation_hash: string;
  created_at: number;
  /** AES-256-GCM sealed JSON of the response and its conversation (sealed-column.ts). */
  sealed: StoredSealed;
}

/** The events outbox: one row per event, delivered by whichever instance claims it. */
export interface WebhookEventsTable {
  /** `msg_…`: the `webhook-id`, the same on every attempt. */
  id: string;
  type: string;
  /** Unique when set: a quota event's type, key and month, so it is recorded once. */
  dedupe_key: string | null;
  /** The JSON body, exactly as signed and sent. */
  payload: string;
  created_at: number;
  /** `pending` (to send), `delivered` (a 2xx came back) or `failed` (retries ran out). */
  status: string;
  attempts: number;
  next_attempt_at: number;
  /** The instance's random claim while it delivers; null when nobody does. */
  claim: string | null;
  /** The claim's lease: after this another instance may take the event over. */
  claimed_until: number | null;
  last_attempt_at: number | null;
  /** HTTP status of the last attempt; null when none came back. */
  last_status: number | null;
  /** Why the last attempt failed (status, timeout, connection error), without bodies. */
  last_error: string | null;
  delivered_at: number | null;
}

/** Receivers that answered 410 Gone: nothing is sent to them until re-enabled. */
interface WebhookReceiversTable {
  url: string;
  disabled_at: number;
  reason: string;
}

export interface Database {
  api_keys: ApiKeysTable;
  key_secrets: KeySecretsTable;
  usage: UsageTable;
  usage_days: UsageDaysTable;
  token_usage: TokenUsageTable;
  token_reservations: TokenReservationsTable;
  sessions: SessionsTable;
  idempotency_keys: IdempotencyKeysTable;
  responses: ResponsesTable;
  webhook_events: WebhookEventsTable;
  webhook_receivers: WebhookReceiversTable;
}
