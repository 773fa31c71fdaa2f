/**
 * @module core/placeholder
 * A PLACEHOLDER core (`PLAUDER_CORE=placeholder`): echoes a fixed sentence in the
 * endpoint's language. Useful for load tests of the API itself, where the core's work
 * must not count; it is not a conversational core.
 */
import type { CoreAdapter } from '../core-adapter.js';

export function createPlaceholderCore(): CoreAdapter {
  return {
    name: 'placeholder',
    async reply({ language, history }) {
      const turn = history.length + 1;
      return language === 'de'
        ? `Nachricht ${turn} erhalten. (Platzhalter-Kern)`
        : `Message ${turn} received. (placeholder core)`;
    },
  };
}
