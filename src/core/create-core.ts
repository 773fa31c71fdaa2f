/**
 * @module core/create-core
 * The one place that chooses the core adapter. Its settings were read and checked with
 * the rest of the configuration; a broken knowledge base fails here, at start-up.
 */
import type { CoreSettings } from '../config/config.js';
import { createBuiltinCore } from './builtin/create-builtin-core.js';
import type { CoreAdapter } from './core-adapter.js';
import { createPlaceholderCore } from './placeholder/create-placeholder-core.js';

/** Async because the openai core's HTTP client is loaded only when that core is chosen. */
export async function createCore(settings: CoreSettings): Promise<CoreAdapter> {
  switch (settings.kind) {
    case 'builtin':
      return createBuiltinCore(settings.options);
    case 'openai':
      return (await import('./openai/create-openai-core.js')).createOpenAiCore(settings.options);
    case 'placeholder':
      return createPlaceholderCore();
  }
}
