/**
 * @module cli/cli-context
 * What every CLI command works with: the same config, store and services as the server,
 * on the same database (the server may be running at the same time).
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Config, type DatabaseConfig, loadConfig, redactUrl } from '../config/config.js';
import { createServices, type Services } from '../services.js';
import { createStore, type Store } from '../storage/create-database.js';
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

/** The database as an operator recognises it: the SQLite file's path, or the URL without its password. */
export function databaseName(database: DatabaseConfig): string {
  if (database.dialect !== 'sqlite') return redactUrl(database.url);
  if (database.file === ':memory:') return database.file;
  const absolute = path.resolve(database.file);
  return absolute === database.file ? absolute : `${database.file} (${absolute})`;
}

/**
 * Opens (and migrates) the configured database. A SQLite file that did not exist yet is
 * created, and the operator is told which one on stderr: a command run from another
 * directory must not create a database there silently.
 */
async function openStore(config: Config, io: Pick<CliIo, 'err'>): Promise<Store> {
  const creates = createsDatabase(config.database);
  const store = await createStore(config.database);
  if (creates) io.err(`created database ${databaseName(config.database)}`);
  return store;
}

/** Whether opening this database creates it: a SQLite file that does not exist yet. */
export function createsDatabase(database: DatabaseConfig): boolean {
  return (
    database.dialect === 'sqlite' && database.file !== ':memory:' && !fs.existsSync(database.file)
  );
}

export async function withServices<T>(
  env: NodeJS.ProcessEnv,
  io: Pick<CliIo, 'err'>,
  run: (services: Services) => Promise<T>,
): Promise<T> {
  const config: Config = loadConfig(env);
  const store = await openStore(config, io);
  try {
    return await run(createServices(config, store, loadSecret(config.secret), Date.now));
  } finally {
    await store.close();
  }
}
