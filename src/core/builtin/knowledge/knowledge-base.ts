/**
 * @module core/builtin/knowledge/knowledge-base
 * What a knowledge base is once parsed (format: `knowledge/README.md`), and the error
 * every problem with the file is reported as: its message starts with `file:line:`, so a
 * broken file fails start-up with a pointer to the line to fix.
 */
import type { Language } from '../../core-adapter.js';

/** A value from the file together with the line it came from (for error messages). */
export interface Located {
  readonly text: string;
  readonly line: number;
}

export interface KnowledgeEntry {
  readonly id: string;
  readonly line: number;
  readonly topic: Readonly<Record<Language, string>>;
  readonly answer: Readonly<Record<Language, string>>;
  /** Keywords and phrases, in any language. */
  readonly keywords: readonly Located[];
  /** Each group: at least one of its words must occur in the question. */
  readonly requires: ReadonlyArray<readonly Located[]>;
}

export interface KnowledgeBase {
  readonly source: string;
  /** The assistant's name (default `plauder`). */
  readonly name: string;
  /** The answer to "who are you?", when the file gives one. */
  readonly intro: Readonly<Record<Language, string>> | undefined;
  /** Groups of words that mean the same thing. */
  readonly synonyms: ReadonlyArray<readonly Located[]>;
  /** Groups of words that name alternatives; in a follow-up, one replaces another. */
  readonly alternatives: ReadonlyArray<readonly Located[]>;
  /** Entry ids offered when the assistant does not know an answer, in this order. */
  readonly offer: readonly Located[];
  readonly entries: readonly KnowledgeEntry[];
}

export class KnowledgeBaseError extends Error {
  override readonly name = 'KnowledgeBaseError';
  constructor(
    readonly source: string,
    readonly line: number,
    detail: string,
  ) {
    super(line > 0 ? `${source}:${line}: ${detail}` : `${source}: ${detail}`);
  }
}
