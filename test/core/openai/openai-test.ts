/**
 * `test` of test/helpers/process-fixtures.ts with `openCore`: openai cores against the
 * worker's upstream (reset before the test, see `upstream`) or against another base URL,
 * closed after the test.
 */
import type { CoreAdapter } from '../../../src/core/core-adapter.js';
import { createOpenAiCore } from '../../../src/core/openai/create-openai-core.js';
import type { OpenAiCoreOptions } from '../../../src/core/openai/openai-config.js';
import { test as base } from '../../helpers/process-fixtures.js';
import { testOptions } from './upstream-process.js';

export const test = base.extend('openCore', async ({ upstream, onTestFinished }) => {
  const cores: CoreAdapter[] = [];
  onTestFinished(async () => {
    for (const core of cores) await core.close?.();
  });
  return (overrides: Partial<OpenAiCoreOptions> = {}, baseUrl = upstream.baseUrl): CoreAdapter => {
    const core = createOpenAiCore(testOptions(baseUrl, overrides));
    cores.push(core);
    return core;
  };
});
