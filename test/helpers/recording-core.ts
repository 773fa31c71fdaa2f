/**
 * A core that records every request it is given (`seen`) and answers with `answer` of it,
 * by default "reply to <message>": for tests of what reached the core.
 */
import type { CoreAdapter, CoreRequest } from '../../src/core/core-adapter.js';

export function recordingCore(
  answer: (request: CoreRequest) => string = (request) => `reply to ${request.message}`,
): { core: CoreAdapter; seen: CoreRequest[] } {
  const seen: CoreRequest[] = [];
  const core: CoreAdapter = {
    name: 'recording',
    async reply(request) {
      seen.push(request);
      return answer(request);
    },
  };
  return { core, seen };
}
