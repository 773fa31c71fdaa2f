/**
 * @module sessions/response-store
 * The response objects of `POST /v1/responses` that are kept (docs/contract.md, "Responses
 * API"): each is a turn of a server-side conversation, a session of its key (the same
 * window, retention and encryption as every session), and is kept sealed beside it, bound
 * to its key and id, so that `GET /v1/responses/{id}` can show it again and
 * `previous_response_id` can find its conversation. Only a keyed hash of the id is stored;
 * another key's id, an unknown one and one past the session TTL find nothing.
 */
import type { JsonObject } from '../core/core-adapter.js';
import type { ResponsesRepository } from '../storage/repositories/responses-repository.js';
import { activeSince } from '../storage/repositories/session-expiry.js';
import type { Writes } from '../storage/unit-of-work.js';
import type { TurnSealer } from './turn-sealer.js';

/** A kept response and the conversation it is a turn of. */
interface KeptResponse {
  /** The session the response's turn was stored in. */
  readonly sessionId: string;
  /** True when the Responses door began the conversation (not a client's `X-Session-Id`). */
  readonly own: boolean;
  /** The response object as it was answered. */
  readonly response: JsonObject;
}

export interface ResponseStore {
  /** The write that keeps `kept` under `responseId`, to commit with the response's turn. */
  keep(keyId: string, responseId: string, kept: KeptResponse, nowMs: number): Writes;
  find(keyId: string, responseId: string, nowMs: number): Promise<KeptResponse | undefined>;
  /**
   * Deletes a kept response; returns it, and whether its conversation still has other
   * kept responses. Undefined when there was none.
   */
  delete(
    keyId: string,
    responseId: string,
    nowMs: number,
  ): Promise<{ kept: KeptResponse; others: boolean } | undefined>;
  sweep(nowMs: number): Promise<number>;
}

export function createResponseStore(
  responses: ResponsesRepository,
  sealer: TurnSealer,
  options: { readonly ttlMs: number },
): ResponseStore {
  const idHash = (keyId: string, responseId: string) =>
    sealer.digest('response id', keyId, responseId);
  const binding = (keyId: string, hash: string) => `${keyId}\0${hash}\0response`;
  const open = (keyId: string, hash: string, sealed: string | Uint8Array) => {
    const value = sealer.openJson(sealed, binding(keyId, hash));
    // A value that does not open (another secret, a tampered row) is no response of this key.
    return isKept(value) ? value : undefined;
  };
  const since = (nowMs: number) => activeSince(nowMs, options.ttlMs);

  return {
    keep(keyId, responseId, kept, nowMs) {
      const hash = idHash(keyId, responseId);
      return responses.insert({
        keyId,
        idHash: hash,
        conversationHash: sealer.sessionHash(keyId, kept.sessionId),
        createdAt: nowMs,
        sealed: sealer.sealJson(kept, binding(keyId, hash)),
      });
    },

    async find(keyId, responseId, nowMs) {
      const hash = idHash(keyId, responseId);
      const row = await responses.find(keyId, hash, since(nowMs));
      return row === undefined ? undefined : open(keyId, hash, row.sealed);
    },

    async delete(keyId, responseId, nowMs) {
      const hash = idHash(keyId, responseId);
      const row = await responses.delete(keyId, hash, since(nowMs));
      const kept = row === undefined ? undefined : open(keyId, hash, row.sealed);
      if (row === undefined || kept === undefined) return undefined;
      const others = await responses.hasConversation(keyId, row.conversationHash, since(nowMs));
      return { kept, others };
    },

    sweep(nowMs) {
      return responses.sweep(since(nowMs));
    },
  };
}

function isKept(value: unknown): value is KeptResponse {
  if (typeof value !== 'object' || value === null) return false;
  const kept = value as Record<string, unknown>;
  return (
    typeof kept.sessionId === 'string' &&
    typeof kept.own === 'boolean' &&
    typeof kept.response === 'object' &&
    kept.response !== null
  );
}
