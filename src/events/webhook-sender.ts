/**
 * @module events/webhook-sender
 * Delivers the outbox to the receiver. Every instance runs one; each claims due events
 * with a lease, so one instance makes each attempt, and an instance that dies mid-way
 * leaves its events to the others once the lease runs out. At least once: a 2xx ends an
 * event, anything else is retried with exponential backoff and jitter until the retry
 * window (at least 24 h) has passed; a 410 Gone disables the receiver for every instance
 * until an operator enables it again (`plauder webhooks enable`).
 *
 * Due times come from the services' clock; the timer only decides how often to look.
 * Timers are unref'd and `stop()` aborts attempts in flight and gives their claims back,
 * so the sender neither keeps a process alive nor holds events across a restart.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { WebhookConfig } from '../config/webhook-config.js';
import { safeError } from '../errors/safe-error.js';
import type { ClaimedEvent, EventsRepository } from '../storage/repositories/events-repository.js';
import type { Clock } from '../util/clock.js';
import type { EventOutbox } from './event-outbox.js';
import { createSigner } from './webhook-signature.js';

/** How one attempt ended, for the metrics. */
export type DeliveryResult = 'delivered' | 'retry' | 'gave_up' | 'gone';

interface WebhookSender {
  /**
   * Looks for due events and delivers them; resolves when a round that began after the call
   * is done.
   */
  tick(): Promise<void>;
  /** Stops the timer, aborts attempts in flight and gives their claims back. */
  stop(): Promise<void>;
}

interface WebhookSenderDeps {
  readonly events: EventsRepository;
  readonly config: WebhookConfig;
  readonly clock: Clock;
  readonly log: FastifyBaseLogger;
  readonly onAttempt?: (result: DeliveryResult) => void;
  /** In [0, 1): the backoff's jitter (tests may fix it). */
  readonly random?: () => number;
}

/** Events claimed per round; a full batch is followed by another round at once. */
const BATCH = 20;
/** The lease outlasts an attempt by this much (a slow database write of its outcome). */
const LEASE_MARGIN_MS = 10_000;
const MAX_RETRY_DELAY_MS = 3_600_000;
/** Delivered and failed events are kept this long for the admin API, then deleted. */
const RETENTION_MS = 30 * 86_400_000;
const SWEEP_INTERVAL_MS = 3_600_000;

function createWebhookSender(deps: WebhookSenderDeps): WebhookSender {
  const { events, config, clock, log } = deps;
  const random = deps.random ?? Math.random;
  const sign = createSigner(config.secret);
  const inFlight = new Map<string, { claim: string; abort: AbortController }>();
  let running: Promise<void> | undefined;
  /** The round that follows the one running, for every tick asked for meanwhile. */
  let following: Promise<void> | undefined;
  let stopped = false;
  let lastSweep = 0;

  const timer = setInterval(() => void tick(), config.pollIntervalMs);
  timer.unref();

  /**
   * A round that begins after this call. A round already running may have looked for due
   * events before the change that asked for this one was committed: the caller then gets
   * the round after it, shared by every tick asked for meanwhile.
   */
  function tick(): Promise<void> {
    if (stopped) return Promise.resolve();
    if (running === undefined) return start();
    following ??= running.then(() => {
      following = undefined;
      if (stopped) return;
      return running ?? start();
    });
    return following;
  }

  function start(): Promise<void> {
    const current = round()
      .catch((error: unknown) => log.warn({ error: safeError(error) }, 'webhook round failed'))
      .finally(() => {
        if (running === current) running = undefined;
      });
    running = current;
    return current;
  }

  async function round(): Promise<void> {
    if (await events.receiverState(config.url)) return;
    for (;;) {
      const now = clock();
      const claim = randomUUID();
      const claimed = await events.claimDue(
        now,
        now + config.timeoutMs + LEASE_MARGIN_MS,
        claim,
        BATCH,
      );
      await Promise.all(claimed.map((event) => deliver(event, claim)));
      if (claimed.length < BATCH || stopped) break;
    }
    await sweep();
  }

  async function deliver(event: ClaimedEvent, claim: string): Promise<void> {
    const abort = new AbortController();
    inFlight.set(event.id, { claim, abort });
    try {
      const attemptAt = clock();
      const response = await post(
        config.url,
        { ...sign(event.id, attemptAt, event.payload), 'content-type': 'application/json' },
        event.payload,
        AbortSignal.any([abort.signal, AbortSignal.timeout(config.timeoutMs)]),
      );
      if (abort.signal.aborted) {
        // Shutting down mid-attempt: give the event back for the next instance at once.
        await events.release(event.id, claim);
        return;
      }
      const now = clock();
      const outcome = { now, status: response.status, error: response.error };
      const { status } = response;
      const attempt = event.attempts + 1;
      if (status !== undefined && status >= 200 && status < 300) {
        await events.delivered(event.id, claim, outcome);
        deps.onAttempt?.('delivered');
        log.info({ eventId: event.id, type: event.type, attempt, status }, 'webhook delivered');
        return;
      }
      const next = nextAttemptAt(event, now);
      await events.attemptFailed(event.id, claim, outcome, next);
      if (status === 410) {
        await events.disableReceiver(config.url, now, 'the receiver answered 410 Gone');
        deps.onAttempt?.('gone');
        log.error(
          { eventId: event.id, type: event.type, attempt, status },
          'webhook receiver answered 410 Gone: disabled until `plauder webhooks enable`',
        );
        return;
      }
      deps.onAttempt?.(next === undefined ? 'gave_up' : 'retry');
      log.warn(
        {
          eventId: event.id,
          type: event.type,
          attempt,
          ...(status === undefined ? {} : { status }),
          ...(response.error === undefined ? {} : { reason: response.error }),
          ...(next === undefined ? { gaveUp: true } : { retryAt: new Date(next).toISOString() }),
        },
        'webhook attempt failed',
      );
    } catch (error) {
      // The outcome could not be written: the lease runs out and the event is tried again.
      log.warn({ eventId: event.id, error: safeError(error) }, 'webhook outcome not recorded');
    } finally {
      inFlight.delete(event.id);
    }
  }

  /** Exponential backoff with jitter; undefined once the retry window has passed. */
  function nextAttemptAt(event: ClaimedEvent, now: number): number | undefined {
    if (now - event.createdAt >= config.retryWindowMs) return undefined;
    const exponential = config.retryBaseMs * 2 ** Math.min(event.attempts, 30);
    const delay = Math.min(MAX_RETRY_DELAY_MS, exponential);
    return now + Math.round(delay * (0.5 + random() / 2));
  }

  async function sweep(): Promise<void> {
    const now = clock();
    if (now - lastSweep < SWEEP_INTERVAL_MS) return;
    lastSweep = now;
    const deleted = await events.sweep(now - RETENTION_MS);
    if (deleted > 0) log.info({ deleted }, 'old webhook events deleted');
  }

  return {
    tick,
    async stop() {
      stopped = true;
      clearInterval(timer);
      for (const { abort } of inFlight.values()) abort.abort();
      await running;
    },
  };
}

interface PostResult {
  readonly status: number | undefined;
  readonly error: string | undefined;
}

/**
 * One POST on a connection of its own (events are few; no pooled socket outlives the
 * attempt). The response body is drained and never read or logged.
 */
function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<PostResult> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const request = client.request(
      target,
      {
        method: 'POST',
        agent: false,
        headers: {
          ...headers,
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'plauder-webhooks',
        },
        signal,
      },
      (response) => {
        const status = response.statusCode;
        response.resume();
        response.on('end', () => resolve({ status, error: undefined }));
        response.on('error', () => resolve({ status, error: undefined }));
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      const reason = signal.aborted ? 'timeout' : (error.code ?? error.name);
      resolve({ status: undefined, error: reason });
    });
    request.end(body);
  });
}

/** What the sender works with: the outbox's table, its commit signal, the clock. */
export interface SenderServices {
  readonly events: EventsRepository;
  readonly outbox: Pick<EventOutbox, 'onCommitted'>;
  readonly clock: Clock;
}

/** Runs a sender beside the app while it is up: from `onReady` until `onClose`. */
export function startWebhookSender(
  app: FastifyInstance,
  config: WebhookConfig | undefined,
  services: SenderServices,
  onAttempt: (result: DeliveryResult) => void,
): void {
  if (config === undefined) return;
  let sender: WebhookSender | undefined;
  // Tests (and anything else in process) may ask for a round now instead of at the next poll.
  app.decorate('webhookSender', { tick: () => sender?.tick() ?? Promise.resolve() });
  app.addHook('onReady', async () => {
    sender = createWebhookSender({
      events: services.events,
      config,
      clock: services.clock,
      log: app.log,
      onAttempt,
    });
    // A change this instance committed is sent at once, not at the next poll.
    services.outbox.onCommitted(() => void sender?.tick());
    void sender.tick();
  });
  app.addHook('onClose', async () => sender?.stop());
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Present when a receiver is configured. */
    webhookSender?: Pick<WebhookSender, 'tick'>;
  }
}
