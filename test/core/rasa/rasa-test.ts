/**
 * `test` of test/helpers/process-fixtures.ts with `openCore`: rasa cores against the worker's bot
 * (reset before the test, see `rasaBot`) or against another URL, closed after the test.
 */
import type { CoreAdapter } from '../../../src/core/core-adapter.js';
import { createRasaCore, type RasaCoreOptions } from '../../../src/core/rasa/create-rasa-core.js';
import { test as base } from '../../helpers/process-fixtures.js';
import { testOptions } from './rasa-bot-process.js';

export const test = base.extend('openCore', async ({ rasaBot, onTestFinished }) => {
  const cores: CoreAdapter[] = [];
  onTestFinished(async () => {
    for (const core of cores) await core.close?.();
  });
  return (overrides: Partial<RasaCoreOptions> = {}, url = rasaBot.url): CoreAdapter => {
    const core = createRasaCore(testOptions(url, overrides));
    cores.push(core);
    return core;
  };
});
