/**
 * @module storage/sealed-column
 * How a sealed value (IV, ciphertext and tag: bytes) is kept in the columns that hold one
 * (`sessions.sealed_window`, `idempotency_keys.outcome`, both declared `text`). Where a text
 * column keeps bytes as bytes (SQLite), they are stored as they are: a quarter smaller than
 * base64url, and a turn neither encodes nor decodes them. Elsewhere (PostgreSQL) they are base64url text, as every sealed value was
 * before. Readers take either: `TurnSealer.openJson` opens both.
 */
import type { StoreFeatures } from './dialect.js';

/** A sealed value as a column holds it: bytes, or their base64url text. */
export type StoredSealed = string | Uint8Array;

/** The form in which this database keeps sealed bytes. */
export function sealedColumn(features: StoreFeatures): (sealed: Buffer) => StoredSealed {
  return features.bytesInTextColumns ? keepBytes : toText;
}

const keepBytes = (sealed: Buffer): StoredSealed => sealed;
const toText = (sealed: Buffer): StoredSealed => sealed.toString('base64url');
