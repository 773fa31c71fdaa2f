/**
 * @module core/openai/create-openai-core
 * The `openai` core: replies come from any OpenAI-compatible Chat Completions server
 * (Ollama, vLLM, llama.cpp server, LM Studio, OpenAI, ...), or from an ordered list of them
 * with failover and a circuit breaker per upstream (docs/core.md, "Several upstreams").
 * Timeouts, retries, failover, cancellation and the failure mapping are the shared HTTP
 * upstream's (src/core/http/http-upstream.ts).
 */

import type { CoreAdapter, CoreChunk } from '../core-adapter.js';
import { createHttpUpstream } from '../http/http-upstream.js';
import { createChatStreamDecoder } from './chat-stream-wire.js';
import { buildChatRequest, type ChatReply, parseChatReply } from './chat-wire.js';
import type { OpenAiCoreOptions, OpenAiUpstream } from './openai-config.js';

export type { OpenAiCoreOptions } from './openai-config.js';

export interface OpenAiCoreDeps {
  /** The circuit breakers' clock (default `Date.now`). */
  readonly now?: () => number;
}

export function createOpenAiCore(
  options: OpenAiCoreOptions,
  deps: OpenAiCoreDeps = {},
): CoreAdapter {
  const upstreams: readonly OpenAiUpstream[] = [options, ...options.fallbacks];
  const upstream = createHttpUpstream({
    label: 'openai core',
    targets: upstreams.map(({ baseUrl, apiKey, model }) => ({
      url: chatCompletionsUrl(baseUrl),
      headers: requestHeaders(apiKey),
      model,
    })),
    settings: options,
    statusHints: STATUS_HINTS,
    breaker: { failures: options.breakerFailures, cooldownMs: options.breakerCooldownMs },
    noRetryAfterTimeout: true,
    ...(deps.now ? { now: deps.now } : {}),
  });
  const timeouts = {
    firstItemMs: options.firstTokenTimeoutMs,
    gapMs: options.tokenGapTimeoutMs,
  };
  // One model for all: the body is the same for every upstream and made once.
  const oneModel = upstreams.every(({ model }) => model === options.model);
  const modelAt = (index: number) => upstreams[index]?.model ?? options.model;
  return {
    name: 'openai',
    gateway: true,
    // Each upstream has its own pool: the fair share may run as many turns as they hold.
    capacity: options.maxConnections * upstreams.length,
    async reply(request) {
      const body = (index: number) =>
        JSON.stringify(buildChatRequest(options, request, false, modelAt(index)));
      const { text, usage, finish } = await upstream.post(
        oneModel ? body(0) : body,
        request.signal,
        parseChatReply,
        describeReply,
      );
      if (usage) request.onUsage?.(usage);
      if (finish) request.onFinish?.(finish);
      return text;
    },
    stream(request) {
      const body = (index: number) =>
        JSON.stringify(buildChatRequest(options, request, true, modelAt(index)));
      return upstream.stream(
        oneModel ? body(0) : body,
        request.signal,
        createChatStreamDecoder,
        timeouts,
        describeChunk,
      );
    },
    upstreams: () => upstream.health(),
    observe: (observer) => upstream.observe(observer),
    close: () => upstream.close(),
  };
}

function describeReply(reply: ChatReply) {
  return {
    ...(reply.usage ? { usage: reply.usage } : {}),
    ...(reply.model ? { responseModel: reply.model } : {}),
  };
}

function describeChunk(chunk: CoreChunk) {
  if (chunk.type !== 'usage') return undefined;
  const usage = { promptTokens: chunk.promptTokens, completionTokens: chunk.completionTokens };
  return chunk.model === undefined ? { usage } : { usage, responseModel: chunk.model };
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

/** Hints for operators reading the log; they name variables, never their values. */
const STATUS_HINTS: Readonly<Record<number, string>> = {
  401: '; check PLAUDER_OPENAI_API_KEY',
  403: '; check PLAUDER_OPENAI_API_KEY',
  404: '; check PLAUDER_OPENAI_BASE_URL and PLAUDER_OPENAI_MODEL',
};
