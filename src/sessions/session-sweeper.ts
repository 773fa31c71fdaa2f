/**
 * @module sessions/session-sweeper
 * Deletes sessions idle longer than the TTL, kept responses older than it, and idempotent
 * outcomes past theirs: once at start, then on an unref'd timer. Reads already ignore what has expired, so the sweep
 * only frees space.
 */
import type { FastifyInstance } from 'fastify';
import { safeError } from '../errors/safe-error.js';
import type { Clock } from '../util/clock.js';

/** A store of things that expire: `sweep(now)` deletes the expired ones, says how many. */
interface Sweepable {
  sweep(now: number): Promise<number>;
}

/** What the sweep works with (the app passes its services). */
export interface SweptServices {
  readonly sessions: Sweepable;
  /** Idempotent outcomes past their TTL. */
  readonly idempotency: Sweepable;
  /** Kept responses of `/v1/responses` past the session TTL. */
  readonly responses: Sweepable;
  readonly clock: Clock;
}

export function startSessionSweeper(
  app: FastifyInstance,
  services: SweptServices,
  intervalMs: number,
): void {
  let running: Promise<void> | undefined;
  const sweep = () => {
    const now = services.clock();
    running ??= Promise.all([
      services.sessions.sweep(now),
      services.idempotency.sweep(now),
      services.responses.sweep(now),
    ])
      .then(([deleted, outcomes, responses]) => {
        if (deleted > 0) app.log.info({ deleted }, 'expired sessions deleted');
        if (responses > 0) app.log.info({ deleted: responses }, 'expired responses deleted');
        if (outcomes > 0)
          app.log.info({ deleted: outcomes }, 'expired idempotent outcomes deleted');
      })
      .catch((error: unknown) => app.log.warn({ error: safeError(error) }, 'session sweep failed'))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(sweep, intervalMs);
  timer.unref();
  app.addHook('onReady', async () => sweep());
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await running;
  });
}
