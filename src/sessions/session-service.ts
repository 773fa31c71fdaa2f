/**
 * @module sessions/session-service
 * Session memory: the window of earlier turns handed to the core, the turns a key holder
 * can read or delete, and the retention sweep. Always scoped by key id.
 */
import type { Language, Turn } from '../core/core-adapter.js';
import type { SessionsRepository } from '../storage/repositories/sessions-repository.js';
import type { TurnSealer } from './turn-sealer.js';

export interface StoredSessionTurn extends Turn {
  readonly createdAt: string;
}

export interface SessionService {
  /** The memory window, oldest first; empty for a new or expired session. */
  history(keyId: string, sessionId: string, nowMs: number): Promise<Turn[]>;
  record(keyId: string, sessionId: string, turn: Turn, nowMs: number): Promise<void>;
  /** All stored turns, or undefined when there is no live session. */
  read(keyId: string, sessionId: string, nowMs: number): Promise<StoredSessionTurn[] | undefined>;
  delete(keyId: string, sessionId: string, nowMs: number): Promise<boolean>;
  sweep(nowMs: number): Promise<number>;
}

export interface SessionOptions {
  readonly window: number;
  readonly ttlMs: number;
}

export const SESSION_ID_PATTERN = /^[A-Za-z0-9._:@-]{1,128}$/;

export function createSessionService(
  sessions: SessionsRepository,
  sealer: TurnSealer,
  options: SessionOptions,
): SessionService {
  const binding = (keyId: string, hash: string, seq: number) => `${keyId}\0${hash}\0${seq}`;

  async function load(keyId: string, sessionId: string, nowMs: number) {
    const hash = sealer.sessionHash(keyId, sessionId);
    const rows = await sessions.recentTurns(keyId, hash, options.window, nowMs - options.ttlMs);
    return rows.flatMap((row) => {
      const content = sealer.open(row.sealed, binding(keyId, hash, row.seq));
      // A turn that does not open (other secret, tampered row) is not memory of this key.
      if (!content) return [];
      return [{ ...content, language: row.language as Language, createdAt: row.createdAt }];
    });
  }

  return {
    async history(keyId, sessionId, nowMs) {
      const turns = await load(keyId, sessionId, nowMs);
      return turns.map(({ message, reply, language }) => ({ message, reply, language }));
    },

    async record(keyId, sessionId, turn, nowMs) {
      if (options.window === 0) return;
      const hash = sealer.sessionHash(keyId, sessionId);
      const content = { message: turn.message, reply: turn.reply };
      await sessions.append(
        keyId,
        hash,
        { language: turn.language, seal: (seq) => sealer.seal(content, binding(keyId, hash, seq)) },
        options.window,
        nowMs,
        nowMs - options.ttlMs,
      );
    },

    async read(keyId, sessionId, nowMs) {
      const turns = await load(keyId, sessionId, nowMs);
      if (turns.length === 0) return undefined;
      return turns.map((t) => ({ ...t, createdAt: new Date(t.createdAt).toISOString() }));
    },

    delete(keyId, sessionId, nowMs) {
      return sessions.delete(keyId, sealer.sessionHash(keyId, sessionId), nowMs - options.ttlMs);
    },

    sweep(nowMs) {
      return sessions.sweep(nowMs - options.ttlMs);
    },
  };
}
