/**
 * @module core/create-core
 * The one place that chooses the core adapter. Its settings were read and checked with
 * the rest of the configuration; a broken knowledge base fails here, at start-up.
 */
import type { CoreSettings } from '../config/config.js';
import { createBuiltinCore } from './builtin/create-builtin-core.js';
import type { CoreAdapter } from './core-adapter.js';
import { createOpenAiCore } from './openai/create-openai-core.js';
import { createPlaceholderCore } from './placeholder/create-placeholder-core.js';

export function createCore(settings: CoreSettings): CoreAdapter {
  switch (settings.kind) {
    case 'builtin':
      return createBuiltinCore(settings.options);
    case 'openai':
      return createOpenAiCore(settings.options);
    case 'placeholder':
      return createPlaceholderCore();
  }
}
