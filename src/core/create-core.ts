/**
 * @module core/create-core
 * The one place that chooses the core adapter from the configuration. Adapter settings
 * are read (and all their problems reported) by `readCoreSettings` at start-up.
 */
import { type Config, ConfigError } from '../config/config.js';
import type { CoreAdapter } from './core-adapter.js';
import { createPlaceholderCore } from './placeholder/create-placeholder-core.js';

export function createCore(config: Config): CoreAdapter {
  switch (config.coreKind) {
    case 'placeholder':
      return createPlaceholderCore();
    case 'builtin':
      return createPlaceholderCore();
    case 'openai':
      throw new ConfigError(['PLAUDER_CORE=openai is not available yet']);
  }
}
