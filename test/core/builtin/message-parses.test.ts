import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MessageParses,
  type ParsedMessage,
} from '../../../src/core/builtin/conversation/message-reader.js';
import { createBuiltinCore } from '../../../src/core/builtin/create-builtin-core.js';
import type { Language, Turn } from '../../../src/core/core-adapter.js';
import { conversations } from './conversations.js';

const signal = new AbortController().signal;
const HISTORY = { askedForName: false, maxTokens: 40 };

function parse(label: string): ParsedMessage {
  return {
    statement: undefined,
    kinds: [],
    upset: false,
    segments: [{ question: label.endsWith('?'), talk: false, clauses: [] }],
  };
}

/** Replays every conversation of the table, each turn with the turns before it as history. */
async function replayTable(core: ReturnType<typeof createBuiltinCore>): Promise<string[]> {
  const replies: string[] = [];
  for (const conversation of conversations) {
    const history: Turn[] = [];
    for (const turn of conversation.turns) {
      const language = turn.language ?? conversation.language;
      const earlier = conversation.session === false ? [] : [...history];
      const reply = await core.reply({ language, message: turn.message, history: earlier, signal });
      history.push({ message: turn.message, reply, language });
      replies.push(reply);
    }
  }
  return replies;
}

describe('message parses kept between requests', () => {
  it('parses a message once per read options and hands the same parse back', () => {
    const parses = new MessageParses(8);
    const made: string[] = [];
    const get = (message: string, options = HISTORY) =>
      parses.get(message, options, () => {
        made.push(`${message}/${options.maxTokens}/${options.askedForName}`);
        return parse(message);
      });
    const first = get('Wie viele Anfragen?');
    expect(get('Wie viele Anfragen?')).toBe(first);
    // Another token budget or a name question may read the same text differently.
    get('Wie viele Anfragen?', { askedForName: true, maxTokens: 40 });
    get('Wie viele Anfragen?', { askedForName: false, maxTokens: 160 });
    expect(made).toEqual([
      'Wie viele Anfragen?/40/false',
      'Wie viele Anfragen?/40/true',
      'Wie viele Anfragen?/160/false',
    ]);
  });

  it('keeps at most its limit of messages, forgetting the oldest', () => {
    const parses = new MessageParses(2);
    let made = 0;
    const get = (message: string) =>
      parses.get(message, HISTORY, () => {
        made += 1;
        return parse(message);
      });
    get('a');
    get('b');
    get('c');
    expect(made).toBe(3);
    get('c');
    get('b');
    expect(made).toBe(3);
    get('a');
    expect(made).toBe(4);
  });

  it('gives every turn of the conversation table the reply a core that kept nothing gives', async () => {
    const cold = await replayTable(createBuiltinCore());
    // The same core, having read every message before in other conversations and orders.
    const warm = createBuiltinCore();
    const reversed = [...conversations].reverse();
    for (const conversation of reversed) {
      const turns = [...conversation.turns].reverse();
      const history = turns.map((turn) => ({
        message: turn.message,
        reply: 'Möchtest du mir deinen Namen verraten?',
        language: conversation.language,
      }));
      for (const turn of turns) {
        await warm.reply({
          language: conversation.language,
          message: turn.message,
          history,
          signal,
        });
      }
    }
    const again = await replayTable(warm);
    expect(again).toEqual(cold);
    // Read a third time, every parse comes from what was kept.
    expect(await replayTable(warm)).toEqual(cold);
  });

  it('replies to random conversations as the same core does that read them in another order', async () => {
    const first = createBuiltinCore();
    const warm = createBuiltinCore();
    const language = fc.constantFrom<Language>('de', 'en');
    const message = fc.oneof(
      fc.constantFrom(
        'Wie viele Anfragen habe ich?',
        'Und im Plus-Plan?',
        'Ich heiße Anna',
        'what about sessions?',
        'Kann ich ihn löschen?',
        'danke, und wie rotiere ich den Schlüssel?',
        'Anna',
      ),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }),
    );
    const turn = fc.record({
      message,
      reply: fc.constantFrom('Wie heißt du?', 'What is your name?', 'Gern.', 'OK'),
      language,
    });
    await fc.assert(
      fc.asyncProperty(
        language,
        message,
        fc.array(turn, { maxLength: 8 }),
        async (lang, text, history) => {
          // The warm core reads the same messages in another order and context first.
          await warm.reply({
            language: lang,
            message: text,
            history: [...history].reverse(),
            signal,
          });
          for (const earlier of history) {
            await warm.reply({ language: lang, message: earlier.message, history: [], signal });
          }
          const expected = await first.reply({ language: lang, message: text, history, signal });
          const reply = await warm.reply({ language: lang, message: text, history, signal });
          expect(reply).toBe(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
