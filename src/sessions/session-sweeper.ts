/**
 * @module sessions/session-sweeper
 * Deletes sessions idle longer than the TTL: once at start, then on an unref'd timer.
 * Reads already ignore expired sessions, so the sweep only frees space.
 */
import type { FastifyInstance } from 'fastify';
import { safeError } from '../errors/safe-error.js';
import type { Services } from '../services.js';

export function startSessionSweeper(app: FastifyInstance, services: Services): void {
  let running: Promise<void> | undefined;
  const sweep = () => {
    running ??= services.sessions
      .sweep(services.clock())
      .then((deleted) => {
        if (deleted > 0) app.log.info({ deleted }, 'expired sessions deleted');
      })
      .catch((error: unknown) => app.log.warn({ error: safeError(error) }, 'session sweep failed'))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(sweep, services.config.sessionSweepIntervalMs);
  timer.unref();
  app.addHook('onReady', async () => sweep());
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await running;
  });
}
