/**
 * @module core/builtin
 * The built-in conversational core (`PLAUDER_CORE=builtin`, the default): offline,
 * deterministic, German and English. It answers from a knowledge base the operator can
 * replace (format: `knowledge/README.md`), with the service's facts taken from the
 * running configuration; it handles small talk, remembers the user's name, resolves
 * follow-up questions from the session's history, and says politely, in the endpoint's
 * language, when it does not know.
 *
 * The knowledge base is read, validated and indexed here, synchronously, so a broken
 * file fails start-up with a `KnowledgeBaseError` listing every problem with its line.
 * While running, `reload()` (on SIGHUP) and `watch()` (on a change of the file) replace
 * it; a broken new file is reported and the old one stays in use.
 */
import { unwatchFile, watchFile } from 'node:fs';
import type { CancelSignal } from '../../util/cancellation.js';
import { type CoreAdapter, CoreError, type Language, type Turn } from '../core-adapter.js';
import {
  type BuiltinCoreOptions,
  DEFAULT_CONFIDENCE_THRESHOLD,
  DEFAULT_KNOWLEDGE_PATH,
  isValidThreshold,
} from './builtin-config.js';
import {
  createReplyComposer,
  type Explanation,
  type ReplyComposer,
} from './conversation/reply-composer.js';
import { KnowledgeBaseError, ProblemList } from './knowledge/knowledge-base.js';
import { buildKnowledgeIndex, type KnowledgeIndex } from './knowledge/knowledge-index.js';
import { parseKnowledgeBase, readKnowledgeFile } from './knowledge/knowledge-parser.js';
import { DEFAULT_SERVICE_FACTS, type ServiceFacts } from './service-facts.js';

export type { BuiltinCoreOptions } from './builtin-config.js';
export { KnowledgeBaseError } from './knowledge/knowledge-base.js';

export type ReloadResult =
  | { readonly ok: true; readonly path: string; readonly entries: number }
  | { readonly ok: false; readonly path: string; readonly error: KnowledgeBaseError };

/** What the built-in core offers beyond `CoreAdapter`: reloading and explaining. */
export interface BuiltinCore extends CoreAdapter {
  readonly name: 'builtin';
  readonly knowledgePath: string;
  /** Reads the knowledge file again; keeps the current one when the new one is broken. */
  reload(): ReloadResult;
  /** Reloads whenever the file changes (checked every `intervalMs`) until `close()`. */
  watch(onReload: (result: ReloadResult) => void, intervalMs?: number): void;
  /** The reply and how it came about (`plauder ask --explain`). */
  explain(language: Language, message: string, history: readonly Turn[]): Explanation;
  /** The index in use (for tests and `--explain`). */
  index(): KnowledgeIndex;
}

/** Reads, checks and indexes a knowledge file; every problem is thrown at once. */
export function loadKnowledgeIndex(
  path: string,
  facts: ServiceFacts = DEFAULT_SERVICE_FACTS,
): KnowledgeIndex {
  const problems = new ProblemList(path);
  const base = parseKnowledgeBase(readKnowledgeFile(path), path, problems);
  const index = buildKnowledgeIndex(base, problems, facts);
  problems.throwIfAny();
  return index;
}

/** The built-in core behind a `CoreAdapter`, if it is one. */
export function asBuiltinCore(core: CoreAdapter): BuiltinCore | undefined {
  return core.name === 'builtin' && 'reload' in core ? (core as BuiltinCore) : undefined;
}

export function createBuiltinCore(options: BuiltinCoreOptions = {}): BuiltinCore {
  const threshold = options.confidenceThreshold ?? DEFAULT_CONFIDENCE_THRESHOLD;
  if (!isValidThreshold(threshold)) {
    throw new RangeError(`confidenceThreshold must be in (0, 1], got ${threshold}`);
  }
  const path = options.knowledgePath ?? DEFAULT_KNOWLEDGE_PATH;
  const facts = options.facts ?? DEFAULT_SERVICE_FACTS;
  let current: { index: KnowledgeIndex; composer: ReplyComposer };
  const load = () => {
    const index = loadKnowledgeIndex(path, facts);
    return { index, composer: createReplyComposer(index, threshold) };
  };
  current = load();
  let watching = false;
  const onChange = (
    now: { mtimeMs: number; size: number },
    before: { mtimeMs: number; size: number },
  ) => {
    if (now.mtimeMs !== before.mtimeMs || now.size !== before.size) listener?.(reload());
  };
  let listener: ((result: ReloadResult) => void) | undefined;

  const reload = (): ReloadResult => {
    try {
      current = load();
      return { ok: true, path, entries: current.index.entries.length };
    } catch (error) {
      if (error instanceof KnowledgeBaseError) return { ok: false, path, error };
      throw error;
    }
  };

  return {
    name: 'builtin',
    knowledgePath: path,
    async reply({ language, message, history, signal }) {
      // The work is synchronous and takes well under a millisecond; an already aborted
      // request (timeout, client gone) is not worth answering.
      throwIfAborted(signal);
      return current.composer.compose(language, message, history);
    },
    async *stream({ language, message, history, signal }) {
      throwIfAborted(signal);
      for (const text of phrases(current.composer.compose(language, message, history))) {
        yield { type: 'delta', text };
      }
    },
    reload,
    watch(onReload, intervalMs = 1000) {
      if (watching) return;
      watching = true;
      listener = onReload;
      watchFile(path, { interval: intervalMs, persistent: false }, onChange);
    },
    explain: (language, message, history) => current.composer.explain(language, message, history),
    index: () => current.index,
    async close() {
      if (watching) unwatchFile(path, onChange);
      watching = false;
    },
  };
}

function throwIfAborted(signal: CancelSignal): void {
  if (!signal.aborted) return;
  const timedOut = (signal.reason as { name?: unknown } | undefined)?.name === 'TimeoutError';
  throw new CoreError(
    timedOut ? 'core_timeout' : 'core_unavailable',
    'request aborted before the reply',
  );
}

/**
 * The reply cut after each sentence or phrase (punctuation followed by a space, or a line
 * break), keeping every character: the pieces joined are the reply.
 */
function phrases(reply: string): string[] {
  return reply.split(/(?<=[.!?…;:,]\s+|\n)(?=\S)/u);
}
