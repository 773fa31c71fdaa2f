/**
 * @module storage/repositories/responses-repository
 * Kept response objects of `POST /v1/responses`, always addressed by (API key id, hashed
 * response id): one key can never reach another key's responses.
 */
import type { Kysely } from 'kysely';
import type { StoreFeatures } from '../dialect.js';
import { prepareQuery, queryTarget } from '../prepared-query.js';
import type { Database } from '../schema.js';
import { type StoredSealed, sealedColumn } from '../sealed-column.js';
import { UnitOfWork, type Writes } from '../unit-of-work.js';

interface ResponseRow {
  readonly keyId: string;
  readonly idHash: string;
  readonly conversationHash: string;
  readonly createdAt: number;
  readonly sealed: Buffer;
}

interface FoundResponse {
  readonly conversationHash: string;
  readonly createdAt: number;
  readonly sealed: StoredSealed;
}

export interface ResponsesRepository {
  /** The write that keeps a response, to commit with its turn (a repeat keeps the first). */
  insert(row: ResponseRow): Writes;
  /** The response, unless it was created before `since`. */
  find(keyId: string, idHash: string, since: number): Promise<FoundResponse | undefined>;
  /** Deletes the response; undefined when there was none (or it had expired). */
  delete(keyId: string, idHash: string, since: number): Promise<FoundResponse | undefined>;
  /** Whether the key keeps any response of the conversation created since `since`. */
  hasConversation(keyId: string, conversationHash: string, since: number): Promise<boolean>;
  /** Deletes the responses created before `since`; returns how many. */
  sweep(since: number): Promise<number>;
}

export function createResponsesRepository(
  db: Kysely<Database>,
  features: StoreFeatures,
): ResponsesRepository {
  const on = queryTarget(db, features);
  const stored = sealedColumn(features);
  const insertQuery = prepareQuery<
    {
      keyId: string;
      idHash: string;
      conversationHash: string;
      createdAt: number;
      sealed: StoredSealed;
    },
    unknown
  >((p) =>
    db
      .insertInto('responses')
      .values({
        key_id: p<string>('keyId'),
        id_hash: p<string>('idHash'),
        conversation_hash: p<string>('conversationHash'),
        created_at: p<number>('createdAt'),
        sealed: p<StoredSealed>('sealed'),
      })
      .onConflict((oc) => oc.columns(['key_id', 'id_hash']).doNothing()),
  );
  const findQuery = prepareQuery<
    { keyId: string; idHash: string; since: number },
    { conversation_hash: string; created_at: number; sealed: StoredSealed }
  >((p) =>
    db
      .selectFrom('responses')
      .select(['conversation_hash', 'created_at', 'sealed'])
      .where('key_id', '=', p<string>('keyId'))
      .where('id_hash', '=', p<string>('idHash'))
      .where('created_at', '>=', p<number>('since')),
  );
  const found = (
    row: { conversation_hash: string; created_at: number; sealed: StoredSealed } | undefined,
  ): FoundResponse | undefined =>
    row === undefined
      ? undefined
      : {
          conversationHash: row.conversation_hash,
          createdAt: Number(row.created_at),
          sealed: row.sealed,
        };

  return {
    insert(row) {
      const write = insertQuery.bind({
        keyId: row.keyId,
        idHash: row.idHash,
        conversationHash: row.conversationHash,
        createdAt: row.createdAt,
        sealed: stored(row.sealed),
      });
      return (work) => UnitOfWork.add(work, write);
    },

    async find(keyId, idHash, since) {
      return found((await findQuery(on, { keyId, idHash, since })).rows[0]);
    },

    async delete(keyId, idHash, since) {
      const row = await db
        .deleteFrom('responses')
        .where('key_id', '=', keyId)
        .where('id_hash', '=', idHash)
        .where('created_at', '>=', since)
        .returning(['conversation_hash', 'created_at', 'sealed'])
        .executeTakeFirst();
      return found(row);
    },

    async hasConversation(keyId, conversationHash, since) {
      const row = await db
        .selectFrom('responses')
        .select('id_hash')
        .where('key_id', '=', keyId)
        .where('conversation_hash', '=', conversationHash)
        .where('created_at', '>=', since)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    async sweep(since) {
      const result = await db
        .deleteFrom('responses')
        .where('created_at', '<', since)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
