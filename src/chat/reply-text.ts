/**
 * @module chat/reply-text
 * A streamed reply's text as it is kept until the turn ends (for `done`, the session and an
 * `Idempotency-Key`): its UTF-8 bytes, once, in chunks of at most 24 KiB. A string grown
 * piece by piece kept every piece (as UTF-16 when one character needed it) next to the
 * flattened whole that `done` and the session made of it; a client that reads nothing held
 * all of that for as long as it was waited for (docs/streaming.md, "Slow readers").
 *
 * The text is decoded afresh whenever a whole string is asked for (`toString`), and `done`
 * is written chunk by chunk (`jsonStringPieces`), so nothing keeps a second copy.
 */
import { StringDecoder } from 'node:string_decoder';

/** Pieces are packed into a chunk once they add up to this many UTF-16 units. */
const PACK_UNITS = 8 * 1024;

export class ReplyText {
  /** The packed text: each chunk a one-byte string whose characters are UTF-8 bytes. */
  private readonly packed: string[] = [];
  private packedBytes = 0;
  /** Pieces not packed yet (at most about `PACK_UNITS` units). */
  private pending: string[] = [];
  private pendingUnits = 0;

  /** The UTF-8 length of the text appended so far. */
  get byteLength(): number {
    return this.packedBytes + Buffer.byteLength(this.pending.join(''));
  }

  append(piece: string): void {
    this.pending.push(piece);
    this.pendingUnits += piece.length;
    if (this.pendingUnits >= PACK_UNITS) this.pack();
  }

  /**
   * The pending pieces as one chunk of UTF-8 bytes, kept in a one-byte string: in V8's heap,
   * whose pages go back to the system once free (Buffers' bytes, malloc'd by the thousand
   * next to the sockets' short-lived buffers, stayed in the process after 300 streams had
   * ended: about 1.35 GB against 290 MB as strings). A high surrogate at the end waits for its pair.
   */
  private pack(): void {
    let text = this.pending.join('');
    this.pending = [];
    this.pendingUnits = 0;
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.pending.push(text.slice(-1));
      this.pendingUnits = 1;
      text = text.slice(0, -1);
    }
    if (text === '') return;
    const bytes = Buffer.from(text, 'utf8');
    this.packed.push(bytes.toString('latin1'));
    this.packedBytes += bytes.length;
  }

  /** The bytes, chunk by chunk (each a fresh copy, the caller's to drop). */
  *chunks(): Generator<Buffer> {
    for (const chunk of this.packed) yield Buffer.from(chunk, 'latin1');
    if (this.pending.length > 0) yield Buffer.from(this.pending.join(''), 'utf8');
  }

  /** The whole text, decoded afresh: the caller's to drop when done with it. */
  toString(): string {
    const decoder = new StringDecoder('utf8');
    let text = '';
    for (const chunk of this.chunks()) text += decoder.write(chunk);
    return text + decoder.end();
  }

  /** How many code points the text has (the token estimate counts them). */
  codePoints(): number {
    let count = 0;
    for (const chunk of this.packed) {
      // Every byte but a UTF-8 continuation byte (10xxxxxx) starts a code point.
      for (let i = 0; i < chunk.length; i++) if ((chunk.charCodeAt(i) & 0xc0) !== 0x80) count++;
    }
    for (const _ of this.pending.join('')) count++;
    return count;
  }
}

/** The reply as it is held: a core's whole string, or a streamed reply's bytes. */
export type HeldReply = string | ReplyText;

/** Characters of a string reply per piece of its JSON; a block of bytes for a ReplyText. */
const STRING_PIECE = 16 * 1024;

/**
 * `"text"` as a JSON string, in pieces of at most about 64 KiB, each escaped on its own (a
 * surrogate pair cut between two slices of a string becomes two `\u` escapes, which a JSON
 * parser joins again).
 */
export function* jsonStringPieces(text: HeldReply): Generator<string> {
  yield '"';
  if (typeof text === 'string') {
    for (let start = 0; start < text.length; start += STRING_PIECE) {
      yield JSON.stringify(text.slice(start, start + STRING_PIECE)).slice(1, -1);
    }
  } else {
    const decoder = new StringDecoder('utf8');
    for (const chunk of text.chunks()) {
      const piece = decoder.write(chunk);
      if (piece !== '') yield JSON.stringify(piece).slice(1, -1);
    }
    const rest = decoder.end();
    if (rest !== '') yield JSON.stringify(rest).slice(1, -1);
  }
  yield '"';
}

/** The held reply as a string, decoded afresh when it was kept as bytes. */
export function replyString(text: HeldReply): string {
  return typeof text === 'string' ? text : text.toString();
}
