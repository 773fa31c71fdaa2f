/**
 * @module core/builtin/conversation/dialogue-state
 * What the conversation so far says, rebuilt from the session's history on every request
 * (the core keeps no state between requests): the user's name, whether the assistant has
 * just asked for it, and the topic (the entries answered last and the words of the last
 * question, with the plan, key or session they were about), against which an elliptical
 * follow-up is read.
 */
import type { Language, Turn } from '../../core-adapter.js';
import { EMPTY_CONTEXT, type ReadingContext } from '../matching/interpreter.js';
import { type ReaderParts, readMessage } from './message-reader.js';
import { ASKED_FOR_NAME } from './phrases.js';
import type { UserName } from './user-memory.js';

export interface DialogueState {
  readonly name: UserName | undefined;
  /** The last reply asked for the user's name. */
  readonly askedForName: boolean;
  /** The last question asked for the user's name ("Und jetzt?" asks again). */
  readonly lastAskedName: boolean;
  readonly context: ReadingContext;
}

/** How many earlier turns can shape the reading of a follow-up. */
const CONTEXT_TURNS = 3;
/** An earlier turn only needs to give the topic: its length is bounded. */
const HISTORY_CHARS = 500;
const HISTORY_TOKENS = 40;

const EMPTY_STATE: DialogueState = {
  name: undefined,
  askedForName: false,
  lastAskedName: false,
  context: EMPTY_CONTEXT,
};

function askedForName(reply: string): boolean {
  return (Object.keys(ASKED_FOR_NAME) as Language[]).some((language) =>
    reply.startsWith(ASKED_FOR_NAME[language]),
  );
}

export function buildDialogueState(parts: ReaderParts, history: readonly Turn[]): DialogueState {
  if (history.length === 0) return EMPTY_STATE;
  let context: ReadingContext = EMPTY_CONTEXT;
  let lastAskedName = false;
  const recent = history.slice(-CONTEXT_TURNS);
  const before = history[history.length - recent.length - 1];
  recent.forEach((turn, i) => {
    const previousReply = i === 0 ? (before?.reply ?? '') : (recent[i - 1]?.reply ?? '');
    const analysis = readMessage(parts, turn.message.slice(0, HISTORY_CHARS), context, {
      askedForName: askedForName(previousReply),
      maxTokens: HISTORY_TOKENS,
    });
    context = analysis.context;
    if (analysis.kinds.includes('askName')) lastAskedName = true;
    else if (analysis.clauses.length > 0) lastAskedName = false;
  });
  return {
    name: parts.names.fromHistory(history, askedForName),
    askedForName: askedForName(history.at(-1)?.reply ?? ''),
    lastAskedName,
    context,
  };
}
