/**
 * @module services
 * The domain services an app instance works with, built once from the config, the store
 * and the core. Routes and the CLI receive them; nothing else constructs them.
 */
import type { Config } from './config/config.js';
import type { CoreAdapter } from './core/core-adapter.js';
import { createEventOutbox, type EventOutbox } from './events/event-outbox.js';
import {
  createIdempotencyService,
  type IdempotencyService,
} from './idempotency/idempotency-service.js';
import { createKeyCache, DEFAULT_KEY_CACHE, type KeyCacheOptions } from './keys/key-cache.js';
import { createKeyService, type KeyService } from './keys/key-service.js';
import { type Clock, createMonthWindows } from './quota/month-window.js';
import { createQuotaService, type QuotaService } from './quota/quota-service.js';
import { createTokenBudgets, type TokenBudgets } from './quota/token-budgets.js';
import { createResponseStore, type ResponseStore } from './sessions/response-store.js';
import { createSessionService, type SessionService } from './sessions/session-service.js';
import { createTurnSealer } from './sessions/turn-sealer.js';
import type { Store } from './storage/create-database.js';
import {
  createEventsRepository,
  type EventsRepository,
} from './storage/repositories/events-repository.js';
import { createIdempotencyRepository } from './storage/repositories/idempotency-repository.js';
import { createKeysRepository } from './storage/repositories/keys-repository.js';
import { createResponsesRepository } from './storage/repositories/responses-repository.js';
import { createSessionsRepository } from './storage/repositories/sessions-repository.js';
import { createTokenUsageRepository } from './storage/repositories/token-usage-repository.js';
import {
  createUsageRepository,
  type UsageRepository,
} from './storage/repositories/usage-repository.js';

export interface Services {
  readonly config: Config;
  readonly clock: Clock;
  readonly keys: KeyService;
  readonly quota: QuotaService;
  /** Token budgets of plans that have them (docs/quota-and-limits.md, "Token budgets"). */
  readonly tokens: TokenBudgets;
  readonly usage: UsageRepository;
  readonly sessions: SessionService;
  /** Kept response objects of `POST /v1/responses`, turns of sessions. */
  readonly responses: ResponseStore;
  readonly idempotency: IdempotencyService;
  /** Records events with the changes that cause them (a no-op without a receiver). */
  readonly outbox: EventOutbox;
  /** The outbox table and the receivers' state, for the sender and the admin API. */
  readonly events: EventsRepository;
  readonly store: Store;
}

export function createServices(
  config: Config,
  store: Store,
  secret: Buffer,
  clock: Clock,
  /** The key cache's real-time clock (tests hold it still; default performance.now). */
  monotonic?: KeyCacheOptions['monotonic'],
): Services {
  const usage = createUsageRepository(store.db, store.features);
  const sealer = createTurnSealer(secret);
  const events = createEventsRepository(store.db, store.features);
  const outbox = createEventOutbox(events, config.webhook !== undefined);
  const windows = createMonthWindows(config.quotaTimeZone);
  const tokens = createTokenBudgets(
    createTokenUsageRepository(store.db, store.features),
    windows,
    outbox,
    { reservationMs: config.coreTimeoutMs + TOKEN_RESERVATION_SLACK_MS },
  );
  return {
    config,
    clock,
    store,
    usage,
    outbox,
    events,
    keys: createKeyService(
      createKeysRepository(store.db, store.features),
      config.plans,
      clock,
      outbox,
      createKeyCache({ ...DEFAULT_KEY_CACHE, changes: store.features.changesElsewhere, monotonic }),
    ),
    tokens,
    quota: createQuotaService(usage, windows, outbox, { freeHangups: config.freeHangups, tokens }),
    sessions: createSessionService(createSessionsRepository(store.db, store.features), sealer, {
      window: config.sessionWindow,
      ttlMs: config.sessionTtlMs,
      maxBytes: config.sessionMaxBytes,
    }),
    responses: createResponseStore(createResponsesRepository(store.db, store.features), sealer, {
      ttlMs: config.sessionTtlMs,
    }),
    idempotency: createIdempotencyService(
      createIdempotencyRepository(store.db, store.features),
      sealer,
      {
        ttlMs: config.idempotencyTtlMs,
        leaseMs: config.idempotencyLeaseMs,
        clock,
        refundUnit: (keyId, unit, hangUp) =>
          hangUp
            ? usage.hangUpWrites(keyId, unit, config.freeHangups)
            : usage.refundWrites(keyId, unit),
      },
    ),
  };
}

/**
 * How much longer than the core's deadline a token reservation stays open before a sweep may
 * release it: the time to record the answer and hand it over (docs/quota-and-limits.md).
 */
const TOKEN_RESERVATION_SLACK_MS = 15_000;

export interface AppDeps {
  readonly services: Services;
  readonly core: CoreAdapter;
}
