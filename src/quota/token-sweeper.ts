/**
 * @module quota/token-sweeper
 * Releases token reservations past their expiry (docs/quota-and-limits.md, "Token budgets"):
 * those of turns whose instance died between reserving and settling. Once at start, then on
 * an unref'd timer; every instance sweeps, and a reservation is released only once.
 */
import type { FastifyInstance } from 'fastify';
import { safeError } from '../errors/safe-error.js';
import type { Clock } from '../util/clock.js';
import type { TokenBudgets } from './token-budgets.js';

/** How often each instance looks for expired reservations. */
const SWEEP_INTERVAL_MS = 5_000;

export function startTokenSweeper(app: FastifyInstance, tokens: TokenBudgets, clock: Clock): void {
  let running: Promise<void> | undefined;
  const sweep = () => {
    running ??= tokens
      .sweep(clock())
      .then((released) => {
        if (released > 0) app.log.warn({ released }, 'expired token reservations released');
      })
      .catch((error: unknown) => app.log.warn({ error: safeError(error) }, 'token sweep failed'))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(sweep, SWEEP_INTERVAL_MS);
  timer.unref();
  app.addHook('onReady', async () => sweep());
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await running;
  });
}
