/**
 * @module routes/api/chat/run-core
 * Calls the core with a deadline and checks its answer. Every failure becomes an
 * `ApiError` with a 500 code; the core's own message goes to the log via `cause` only.
 */
import { type CoreAdapter, CoreError, type CoreRequest } from '../../../core/core-adapter.js';
import { ApiError } from '../../../errors/api-error.js';

export async function runCore(
  core: CoreAdapter,
  request: Omit<CoreRequest, 'signal'>,
  timeoutMs: number,
): Promise<string> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Settle the deadline before aborting, so the race reports the timeout, not the abort.
      reject(new CoreError('core_timeout', `core did not answer within ${timeoutMs} ms`));
      controller.abort();
    }, timeoutMs);
  });
  try {
    const reply = await Promise.race([
      core.reply({ ...request, signal: controller.signal }),
      deadline,
    ]);
    if (typeof reply !== 'string' || reply.trim().length === 0) {
      throw new CoreError('core_unavailable', 'core returned an empty reply');
    }
    return reply;
  } catch (error) {
    const code = error instanceof CoreError ? error.code : 'internal_error';
    throw Object.assign(new ApiError(code), { cause: error });
  } finally {
    clearTimeout(timer);
  }
}
