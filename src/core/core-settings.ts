/**
 * @module core/core-settings
 * The chosen core and its settings, as the configuration hands them to `createCore`.
 * Declared here, with the cores, so that choosing a core does not reach up into config.
 */
import type { BuiltinCoreOptions } from './builtin/builtin-config.js';
import type { OpenAiCoreOptions } from './openai/openai-config.js';
import type { RasaCoreOptions } from './rasa/rasa-config.js';

export const CORE_KINDS = ['builtin', 'openai', 'rasa', 'placeholder'] as const;

export type CoreKind = (typeof CORE_KINDS)[number];

export type CoreSettings =
  | { readonly kind: 'builtin'; readonly options: BuiltinCoreOptions }
  | { readonly kind: 'openai'; readonly options: OpenAiCoreOptions }
  | { readonly kind: 'rasa'; readonly options: RasaCoreOptions }
  | { readonly kind: 'placeholder' };

/**
 * Why the chosen core cannot work as configured (a required setting is empty), or
 * undefined when it can. Says nothing about whether its upstream answers right now: a
 * readiness probe that followed an upstream's hiccups would take every instance out at once.
 */
export function coreSettingsProblem(settings: CoreSettings): string | undefined {
  switch (settings.kind) {
    case 'builtin':
      return settings.options.knowledgePath === ''
        ? 'the built-in core has no knowledge base'
        : undefined;
    case 'openai':
      return settings.options.baseUrl === '' || settings.options.model === ''
        ? 'the openai core needs a base URL and a model'
        : undefined;
    case 'rasa':
      return settings.options.webhooks.de === '' || settings.options.webhooks.en === ''
        ? 'the rasa core needs a bot URL for each language'
        : undefined;
    case 'placeholder':
      return undefined;
  }
}
