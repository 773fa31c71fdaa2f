/**
 * @module core/create-core
 * The one place that chooses the core adapter. Its settings were read and checked with
 * the rest of the configuration; a broken knowledge base fails here, at start-up.
 */

import { createBuiltinCore } from './builtin/create-builtin-core.js';
import type { CoreAdapter } from './core-adapter.js';
import type { CoreSettings } from './core-settings.js';
import { createPlaceholderCore } from './placeholder/create-placeholder-core.js';

export interface CoreDeps {
  /** The clock of the `openai` core's circuit breakers (default `Date.now`); tests move it. */
  readonly now?: () => number;
}

/** Async because the HTTP cores' client is loaded only when one of them is chosen. */
export async function createCore(
  settings: CoreSettings,
  deps: CoreDeps = {},
): Promise<CoreAdapter> {
  switch (settings.kind) {
    case 'builtin':
      return createBuiltinCore(settings.options);
    case 'openai':
      return (await import('./openai/create-openai-core.js')).createOpenAiCore(
        settings.options,
        deps,
      );
    case 'rasa':
      return (await import('./rasa/create-rasa-core.js')).createRasaCore(settings.options);
    case 'placeholder':
      return createPlaceholderCore();
  }
}
