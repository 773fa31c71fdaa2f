/**
 * @module core/builtin/knowledge/knowledge-base
 * What a knowledge base is once parsed (format: `knowledge/README.md`), and the error a
 * broken file is reported as: every problem found, each as `file:line: detail`, so one
 * run of `plauder kb check` (or one failed start) lists everything to fix.
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
  /** The answers as written: they may contain placeholders such as `{plan-limit}`. */
  readonly answer: Readonly<Record<Language, Located>>;
  /** Keywords and phrases, in any language. */
  readonly keywords: readonly Located[];
  /** Example questions in the users' words, in any language. */
  readonly examples: readonly Located[];
  /** Each group: at least one of its words must occur in the question. */
  readonly requires: ReadonlyArray<readonly Located[]>;
}

export interface KnowledgeBase {
  readonly source: string;
  /** The assistant's name (default `plauder`). */
  readonly name: string;
  /** The answer to "who are you?", when the file gives one. */
  readonly intro: Readonly<Record<Language, string>> | undefined;
  /** What the service or assistant does: the start of the answer to "what can you do?". */
  readonly capabilities: Readonly<Record<Language, string>> | undefined;
  /** Groups of words that mean the same thing. */
  readonly synonyms: ReadonlyArray<readonly Located[]>;
  /** Groups of words that name alternatives; in a follow-up, one replaces another. */
  readonly alternatives: ReadonlyArray<readonly Located[]>;
  /** Entry ids offered when the assistant does not know an answer, in this order. */
  readonly offer: readonly Located[];
  readonly entries: readonly KnowledgeEntry[];
}

export interface KnowledgeProblem {
  /** 1-based; 0 when the problem concerns the whole file. */
  readonly line: number;
  readonly detail: string;
}

export class KnowledgeBaseError extends Error {
  override readonly name = 'KnowledgeBaseError';
  /** The line of the first problem (0: the whole file). */
  readonly line: number;
  constructor(
    readonly source: string,
    readonly problems: readonly KnowledgeProblem[],
  ) {
    super(problems.map((problem) => formatProblem(source, problem)).join('\n'));
    this.line = problems[0]?.line ?? 0;
  }
}

function formatProblem(source: string, { line, detail }: KnowledgeProblem): string {
  return line > 0 ? `${source}:${line}: ${detail}` : `${source}: ${detail}`;
}

/** Collects the problems of one file; `throwIfAny` ends the check with all of them. */
export class ProblemList {
  private readonly list: KnowledgeProblem[] = [];
  constructor(readonly source: string) {}
  add(line: number, detail: string): void {
    this.list.push({ line, detail });
  }
  get size(): number {
    return this.list.length;
  }
  throwIfAny(): void {
    if (this.list.length === 0) return;
    const sorted = [...this.list].sort((a, b) => a.line - b.line);
    throw new KnowledgeBaseError(this.source, sorted);
  }
}
