/**
 * @module cli/cli-context
 * What every CLI command works with: the same config, store and services as the server,
 * on the same database (the server may be running at the same time).
 */
import { type Config, loadConfig } from '../config/config.js';
import { createServices, type Services } from '../services.js';
import { createStore } from '../storage/create-database.js';
import { loadSecret } from '../storage/secret.js';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export async function withServices<T>(
  env: NodeJS.ProcessEnv,
  run: (services: Services) => Promise<T>,
): Promise<T> {
  const config: Config = loadConfig(env);
  const store = await createStore(config.database);
  try {
    return await run(createServices(config, store, loadSecret(config.secret), Date.now));
  } finally {
    await store.close();
  }
}
