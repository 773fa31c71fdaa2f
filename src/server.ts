/**
 * @module server
 * The process: read the environment, open the store, build the app, listen, and shut
 * down gracefully on SIGTERM / SIGINT (in-flight requests finish, then the store closes);
 * SIGHUP reloads the built-in core's knowledge base.
 */
import { buildApp } from './app.js';
import { type Config, ConfigError, loadConfig } from './config/config.js';
import {
  asBuiltinCore,
  KnowledgeBaseError,
  type ReloadResult,
} from './core/builtin/create-builtin-core.js';
import type { CoreAdapter } from './core/core-adapter.js';
import { createCore } from './core/create-core.js';
import { createServices } from './services.js';
import { createStore } from './storage/create-database.js';
import { loadSecret } from './storage/secret.js';

const SHUTDOWN_GRACE_MS = 30_000;

export async function serve(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let config: Config;
  let core: CoreAdapter;
  try {
    config = loadConfig(env);
    core = await createCore(config.core);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof KnowledgeBaseError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const store = await createStore(config.database);
  const services = createServices(config, store, loadSecret(config.secret), Date.now);
  const app = await buildApp(config, { services, core }, { sweepSessions: true });

  // The built-in core's knowledge file is reloaded when it changes and on SIGHUP; a broken
  // new file is logged and the old one stays in use.
  const builtin = asBuiltinCore(core);
  if (builtin !== undefined) {
    const report = (result: ReloadResult) =>
      result.ok
        ? app.log.info({ file: result.path, entries: result.entries }, 'knowledge base reloaded')
        : app.log.error(
            { file: result.path, problems: result.error.message.split('\n') },
            'knowledge base not reloaded, the previous one stays in use',
          );
    builtin.watch(report);
    process.on('SIGHUP', () => report(builtin.reload()));
  }

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) {
      app.log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    closing = true;
    app.log.info({ signal }, 'shutting down: waiting for in-flight requests');
    const force = setTimeout(() => {
      app.log.error('shutdown took too long: exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    await app.close();
    await core.close?.();
    await store.close();
    app.log.info('shut down');
  };
  process.on('SIGTERM', (signal) => void shutdown(signal));
  process.on('SIGINT', (signal) => void shutdown(signal));

  await app.listen({ host: config.host, port: config.port });
  app.log.info({ core: core.name, database: config.database.dialect }, 'plauder is ready');
}
