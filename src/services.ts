/**
 * @module services
 * The domain services an app instance works with, built once from the config, the store
 * and the core. Routes and the CLI receive them; nothing else constructs them.
 */
import type { Config } from './config/config.js';
import type { CoreAdapter } from './core/core-adapter.js';
import { createKeyService, type KeyService } from './keys/key-service.js';
import { type Clock, createMonthWindows } from './quota/month-window.js';
import { createQuotaService, type QuotaService } from './quota/quota-service.js';
import { createSessionService, type SessionService } from './sessions/session-service.js';
import { createTurnSealer } from './sessions/turn-sealer.js';
import type { Store } from './storage/create-database.js';
import { createKeysRepository } from './storage/repositories/keys-repository.js';
import { createSessionsRepository } from './storage/repositories/sessions-repository.js';
import {
  createUsageRepository,
  type UsageRepository,
} from './storage/repositories/usage-repository.js';

export interface Services {
  readonly config: Config;
  readonly clock: Clock;
  readonly keys: KeyService;
  readonly quota: QuotaService;
  readonly usage: UsageRepository;
  readonly sessions: SessionService;
  readonly store: Store;
}

export function createServices(
  config: Config,
  store: Store,
  secret: Buffer,
  clock: Clock,
): Services {
  const usage = createUsageRepository(store.db);
  return {
    config,
    clock,
    store,
    usage,
    keys: createKeyService(createKeysRepository(store.db), config.plans, clock),
    quota: createQuotaService(usage, createMonthWindows(config.quotaTimeZone)),
    sessions: createSessionService(createSessionsRepository(store.db), createTurnSealer(secret), {
      window: config.sessionWindow,
      ttlMs: config.sessionTtlMs,
    }),
  };
}

export interface AppDeps {
  readonly services: Services;
  readonly core: CoreAdapter;
}
