/**
 * @module storage/schema
 * Table types for Kysely. Timestamps are Unix milliseconds; booleans are 0/1 integers,
 * so one schema serves every dialect.
 */

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
export interface KeySecretsTable {
  /** SHA-256 hex of the whole key. */
  hash: string;
  key_id: string;
  display_prefix: string;
  created_at: number;
  /** null = valid until rotated; else valid while now < expires_at. */
  expires_at: number | null;
}

export interface UsageTable {
  key_id: string;
  /** Calendar month in the quota time zone, `YYYY-MM`. */
  month: string;
  used: number;
}

export interface SessionsTable {
  key_id: string;
  /** HMAC of the client's sessionId: the id itself is not stored. */
  session_hash: string;
  created_at: number;
  last_active_at: number;
  /** Number of turns ever appended; each write of the window increments it. */
  turn_count: number;
  /**
   * AES-256-GCM sealed JSON of the memory window (base64url), bound to key, session and
   * `turn_count`. Null for sessions stored before migration 002, whose turns are in `turns`.
   */
  sealed_window: string | null;
}

/** Turns of sessions stored before migration 002; read once, then moved into the window. */
export interface TurnsTable {
  key_id: string;
  session_hash: string;
  seq: number;
  language: string;
  created_at: number;
  /** AES-256-GCM sealed JSON of the message and the reply (base64url). */
  sealed: string;
}

export interface Database {
  api_keys: ApiKeysTable;
  key_secrets: KeySecretsTable;
  usage: UsageTable;
  sessions: SessionsTable;
  turns: TurnsTable;
}
