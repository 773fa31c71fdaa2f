/**
 * A streamed reply is kept as its UTF-8 bytes, once (docs/streaming.md, "Slow readers"):
 * what a client that reads nothing makes plauder hold is the reply's UTF-8 size, not a
 * string grown piece by piece next to its flattened copy.
 */
import { describe, expect, it } from 'vitest';
import { jsonStringPieces, ReplyText } from '../../src/chat/reply-text.js';
import { createStopping, runCore } from '../../src/chat/run-core.js';
import type { CoreAdapter, CoreChunk } from '../../src/core/core-adapter.js';
import { Cancellation } from '../../src/util/cancellation.js';

/** German text with characters beyond Latin-1 (which made a string two bytes a character). */
const PIECES = ['„Grüß Gott“ – ', 'sagte 👋', '\ud83d', '\ude00 sie.\n', 'Ende "zitiert" \\ '];

describe('ReplyText', () => {
  it('holds the UTF-8 bytes of what was appended, and gives the text back whole', () => {
    const text = new ReplyText();
    let expected = '';
    for (let i = 0; i < 3000; i++) {
      for (const piece of PIECES) {
        text.append(piece);
        expected += piece;
      }
    }
    expect(text.toString()).toBe(expected);
    expect(text.byteLength).toBe(Buffer.byteLength(expected));
    const kept = [...text.chunks()].reduce((sum, chunk) => sum + chunk.length, 0);
    expect(kept).toBe(Buffer.byteLength(expected));
    expect(text.codePoints()).toBe([...expected].length);
    const json = [...jsonStringPieces(text)].join('');
    expect(JSON.parse(json)).toBe(expected);
    expect(json).not.toMatch(/[\n\r]/);
  });

  it('writes a string reply as JSON in pieces, a surrogate pair cut between two of them', () => {
    const reply = `${'a'.repeat(16 * 1024 - 1)}😀${'b'.repeat(20_000)}`;
    const pieces = [...jsonStringPieces(reply)];
    expect(pieces.length).toBeGreaterThan(3);
    expect(JSON.parse(pieces.join(''))).toBe(reply);
  });
});

describe('runCore, streamed', () => {
  it('keeps the reply as UTF-8 bytes, not as a string', async () => {
    const core: CoreAdapter = {
      name: 'pieces',
      reply: () => Promise.resolve('unused'),
      async *stream(): AsyncIterable<CoreChunk> {
        for (const piece of PIECES) yield { type: 'delta', text: piece };
      },
    };
    const deltas: string[] = [];
    const result = await runCore(
      core,
      { language: 'de', message: 'Hallo', history: [] } as never,
      { client: new Cancellation(), stopping: createStopping(), timeoutMs: 5_000 },
      { delta: (text) => void deltas.push(text), toolCalls: () => {} },
    );
    if (!result.ok) throw new Error(`the core failed: ${result.code}`);
    expect(result.reply).toBeInstanceOf(ReplyText);
    expect(String(result.reply)).toBe(deltas.join(''));
    expect(String(result.reply)).toBe(PIECES.join('').trim());
  });
});
