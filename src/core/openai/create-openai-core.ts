/**
 * @module core/openai/create-openai-core
 * The `openai` core: replies come from any OpenAI-compatible Chat Completions server
 * (Ollama, vLLM, llama.cpp server, LM Studio, OpenAI, ...).
 *
 * Failure mapping (messages are for logs: status, attempt count and error class only; never
 * the API key, the user's message or upstream text):
 * - the last attempt timed out                  -> `core_timeout`
 * - `request.signal` aborted (caller's deadline
 *   or client gone), during an attempt or a wait -> `core_timeout`, at once, no further retry
 * - 429 / 408 / 5xx / connection errors          -> retried, then `core_unavailable`
 * - other 4xx, unusable 2xx bodies, 3xx          -> `core_unavailable` at once
 */

import { type CoreAdapter, CoreError, type CoreRequest } from '../core-adapter.js';
import { buildChatRequest, parseChatReply } from './chat-wire.js';
import type { OpenAiCoreOptions } from './openai-config.js';
import { isRetryableStatus, parseRetryAfterMs, retryDelayMs, sleep } from './retry-policy.js';
import {
  type AttemptFailure,
  type AttemptResult,
  createUpstreamClient,
  type UpstreamClient,
  type UpstreamResponse,
} from './upstream-client.js';

export type { OpenAiCoreOptions } from './openai-config.js';

export function createOpenAiCore(options: OpenAiCoreOptions): CoreAdapter {
  const client = createUpstreamClient(
    chatCompletionsUrl(options.baseUrl),
    requestHeaders(options.apiKey),
    options.maxConnections,
  );
  let closed = false;
  return {
    name: 'openai',
    async reply(request) {
      if (closed) throw new CoreError('core_unavailable', 'openai core: the adapter is closed');
      return replyWithRetries(client, options, request);
    },
    async close() {
      closed = true;
      await client.close();
    },
  };
}

/** `{base}/chat/completions`, keeping a query string; tolerates a base that already ends so. */
export function chatCompletionsUrl(baseUrl: string): URL {
  const url = new URL(baseUrl);
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith('/chat/completions') ? path : `${path}/chat/completions`;
  return url;
}

function requestHeaders(apiKey: string | undefined): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json',
    'user-agent': 'plauder',
    ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }),
  };
}

type Outcome =
  | { readonly kind: 'reply'; readonly reply: string }
  | { readonly kind: 'fail'; readonly error: CoreError }
  | { readonly kind: 'retry'; readonly error: CoreError; readonly retryAfterMs?: number };

async function replyWithRetries(
  client: UpstreamClient,
  options: OpenAiCoreOptions,
  request: CoreRequest,
): Promise<string> {
  const { signal } = request;
  const body = JSON.stringify(buildChatRequest(options, request));
  const attempts = options.maxRetries + 1;
  for (let attempt = 1; ; attempt++) {
    if (signal.aborted) throw abortError(signal.reason, `before attempt ${attempt}`);
    const result = await client.post(body, signal, options.timeoutMs);
    const outcome = judge(result, `attempt ${attempt} of ${attempts}`);
    if (outcome.kind === 'reply') return outcome.reply;
    if (outcome.kind === 'fail' || attempt >= attempts) throw outcome.error;
    const { retryBaseDelayMs, retryMaxDelayMs } = options;
    const wait = retryDelayMs(attempt, retryBaseDelayMs, retryMaxDelayMs, outcome.retryAfterMs);
    if (!(await sleep(wait, signal))) {
      throw abortError(signal.reason, `while waiting to retry after attempt ${attempt}`);
    }
  }
}

/** Turns one attempt's result into a reply, a final failure or a retryable failure. */
function judge(result: AttemptResult, where: string): Outcome {
  return result.ok ? judgeResponse(result.response, where) : judgeFailure(result.failure, where);
}

function judgeFailure(failure: AttemptFailure, where: string): Outcome {
  switch (failure.kind) {
    case 'aborted':
      return { kind: 'fail', error: abortError(failure.reason, `during ${where}`) };
    case 'timeout': {
      const message = `openai core: no complete reply within ${failure.afterMs}ms (${where})`;
      return { kind: 'retry', error: new CoreError('core_timeout', message) };
    }
    case 'connection': {
      const message = `openai core: connection to upstream failed: ${failure.code} (${where})`;
      const error = new CoreError('core_unavailable', message, { cause: failure.cause });
      return { kind: 'retry', error };
    }
    case 'unsendable': {
      const message = `openai core: the request could not be built: ${failure.code} (${where})`;
      return { kind: 'fail', error: new CoreError('core_unavailable', message) };
    }
    case 'too_large': {
      const message = `openai core: reply larger than ${failure.limitBytes} bytes (${where})`;
      return { kind: 'fail', error: new CoreError('core_unavailable', message) };
    }
  }
}

function judgeResponse({ status, headers, body }: UpstreamResponse, where: string): Outcome {
  if (status < 200 || status > 299) {
    const retryable = isRetryableStatus(status);
    const note = retryable ? '' : `, not retried${STATUS_HINTS[status] ?? ''}`;
    const message = `openai core: upstream answered HTTP ${status} (${where}${note})`;
    const error = new CoreError('core_unavailable', message);
    if (!retryable) return { kind: 'fail', error };
    const retryAfterMs = parseRetryAfterMs(headers['retry-after']);
    return retryAfterMs === undefined
      ? { kind: 'retry', error }
      : { kind: 'retry', error, retryAfterMs };
  }
  const parsed = parseChatReply(body);
  if (parsed.ok) return { kind: 'reply', reply: parsed.reply };
  const message = `openai core: unusable reply with HTTP ${status}: ${parsed.problem} (${where})`;
  return { kind: 'fail', error: new CoreError('core_unavailable', message) };
}

/** Hints for operators reading the log; they name variables, never their values. */
const STATUS_HINTS: Readonly<Record<number, string>> = {
  401: '; check PLAUDER_OPENAI_API_KEY',
  403: '; check PLAUDER_OPENAI_API_KEY',
  404: '; check PLAUDER_OPENAI_BASE_URL and PLAUDER_OPENAI_MODEL',
};

/**
 * The caller aborts when its own deadline for the core has passed (or the client left, when
 * the code no longer matters), so an abort is reported as `core_timeout`.
 */
function abortError(reason: unknown, when: string): CoreError {
  const name =
    typeof reason === 'object' && reason !== null && 'name' in reason
      ? String(reason.name)
      : typeof reason;
  return new CoreError('core_timeout', `openai core: aborted by the caller (${name}) ${when}`, {
    cause: reason,
  });
}
