/**
 * @module core/http/attempt-judging
 * How one attempt at an upstream ends: a value, a final failure or a retryable one, shared
 * by the plain and the streamed request (`http-upstream.ts`, `http-stream.ts`).
 */
import { CoreError } from '../core-adapter.js';
import { isRetryableStatus, parseRetryAfterMs } from './retry-policy.js';
import type { AttemptFailure, AttemptResult, UpstreamResponse } from './upstream-client.js';

/** What an adapter made of a 2xx body: a value, or what was wrong with it (for the log). */
export type BodyReading<T> =
  | { readonly ok: true; readonly value: T }
  /** `problem` names what was wrong, never the upstream's text. */
  | { readonly ok: false; readonly problem: string };

export type Outcome<T> =
  | { readonly kind: 'value'; readonly value: T }
  | { readonly kind: 'fail'; readonly error: CoreError }
  | { readonly kind: 'retry'; readonly error: CoreError; readonly retryAfterMs?: number };

export interface Judging<T> {
  readonly label: string;
  readonly hints: Readonly<Record<number, string>>;
  /** `attempt n of m`, for the log. */
  readonly where: string;
  readonly read: (body: string) => BodyReading<T>;
}

/** Turns one attempt's result into a value, a final failure or a retryable failure. */
export function judge<T>(result: AttemptResult, judging: Judging<T>): Outcome<T> {
  return result.ok
    ? judgeResponse(result.response, judging)
    : judgeFailure(result.failure, judging);
}

export function judgeFailure<T>(
  failure: AttemptFailure,
  { label, where }: Pick<Judging<T>, 'label' | 'where'>,
): Outcome<T> {
  switch (failure.kind) {
    case 'aborted':
      return { kind: 'fail', error: abortError(label, failure.reason, `during ${where}`) };
    case 'timeout': {
      const message = `${label}: no complete reply within ${failure.afterMs}ms (${where})`;
      return { kind: 'retry', error: new CoreError('core_timeout', message) };
    }
    case 'connection': {
      const message = `${label}: connection to upstream failed: ${failure.code} (${where})`;
      const error = new CoreError('core_unavailable', message, { cause: failure.cause });
      return { kind: 'retry', error };
    }
    case 'unsendable': {
      const message = `${label}: the request could not be built: ${failure.code} (${where})`;
      return { kind: 'fail', error: new CoreError('core_unavailable', message) };
    }
    case 'too_large': {
      const message = `${label}: reply larger than ${failure.limitBytes} bytes (${where})`;
      return { kind: 'fail', error: new CoreError('core_unavailable', message) };
    }
  }
}

function judgeResponse<T>(response: UpstreamResponse, judging: Judging<T>): Outcome<T> {
  const { status, headers, body } = response;
  const { label, where } = judging;
  const refused = judgeStatus<T>(status, headers, judging);
  if (refused) return refused;
  const reading = judging.read(body);
  if (reading.ok) return { kind: 'value', value: reading.value };
  const message = `${label}: unusable reply with HTTP ${status}: ${reading.problem} (${where})`;
  return { kind: 'fail', error: new CoreError('core_unavailable', message) };
}

/** A non-2xx status as a final or retryable failure; `undefined` for a 2xx. */
export function judgeStatus<T>(
  status: number,
  headers: UpstreamResponse['headers'],
  { label, hints, where }: Pick<Judging<T>, 'label' | 'hints' | 'where'>,
): Outcome<T> | undefined {
  if (status < 200 || status > 299) {
    const retryable = isRetryableStatus(status);
    const note = retryable ? '' : `, not retried${hints[status] ?? ''}`;
    const message = `${label}: upstream answered HTTP ${status} (${where}${note})`;
    const error = new CoreError('core_unavailable', message);
    if (!retryable) return { kind: 'fail', error };
    const retryAfterMs = parseRetryAfterMs(headers['retry-after']);
    return retryAfterMs === undefined
      ? { kind: 'retry', error }
      : { kind: 'retry', error, retryAfterMs };
  }
  return undefined;
}

/**
 * The caller aborts when its own deadline for the core has passed (or the client left, when
 * the code no longer matters), so an abort is reported as `core_timeout`.
 */
export function abortError(label: string, reason: unknown, when: string): CoreError {
  const name =
    typeof reason === 'object' && reason !== null && 'name' in reason
      ? String(reason.name)
      : typeof reason;
  return new CoreError('core_timeout', `${label}: aborted by the caller (${name}) ${when}`, {
    cause: reason,
  });
}
