/**
 * @module core/builtin
 * The built-in conversational core (`PLAUDER_CORE=builtin`, the default): offline,
 * deterministic, German and English. It answers from a knowledge base the operator can
 * replace (format: `knowledge/README.md`), handles small talk, remembers the user's name
 * and resolves follow-up questions from the session's history, and says politely, in
 * the endpoint's language, when it does not know.
 *
 * The knowledge base is read, validated and indexed here, synchronously, so a broken
 * file fails start-up with a `KnowledgeBaseError` naming the file and line.
 */
import { type CoreAdapter, CoreError } from '../core-adapter.js';
import {
  type BuiltinCoreOptions,
  DEFAULT_CONFIDENCE_THRESHOLD,
  DEFAULT_KNOWLEDGE_PATH,
  isValidThreshold,
} from './builtin-config.js';
import { createReplyComposer } from './conversation/reply-composer.js';
import { buildKnowledgeIndex } from './knowledge/knowledge-index.js';
import { loadKnowledgeBase } from './knowledge/knowledge-parser.js';

export type { BuiltinCoreOptions } from './builtin-config.js';
export { KnowledgeBaseError } from './knowledge/knowledge-base.js';

export function createBuiltinCore(options: BuiltinCoreOptions = {}): CoreAdapter {
  const threshold = options.confidenceThreshold ?? DEFAULT_CONFIDENCE_THRESHOLD;
  if (!isValidThreshold(threshold)) {
    throw new RangeError(`confidenceThreshold must be in (0, 1], got ${threshold}`);
  }
  const base = loadKnowledgeBase(options.knowledgePath ?? DEFAULT_KNOWLEDGE_PATH);
  const composer = createReplyComposer(buildKnowledgeIndex(base), threshold);
  return {
    name: 'builtin',
    async reply({ language, message, history, signal }) {
      // The work is synchronous and takes well under a millisecond; an already aborted
      // request (timeout, client gone) is not worth answering.
      if (signal.aborted) {
        const timedOut = (signal.reason as { name?: unknown } | undefined)?.name === 'TimeoutError';
        throw new CoreError(
          timedOut ? 'core_timeout' : 'core_unavailable',
          'request aborted before the reply',
        );
      }
      return composer.compose(language, message, history);
    },
  };
}
