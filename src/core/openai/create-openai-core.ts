/**
 * @module core/openai/create-openai-core
 * The `openai` core: replies come from any OpenAI-compatible Chat Completions server
 * (Ollama, vLLM, llama.cpp server, LM Studio, OpenAI, ...). Timeouts, retries, cancellation
 * and the failure mapping are the shared HTTP upstream's (src/core/http/http-upstream.ts).
 */

import type { CoreAdapter } from '../core-adapter.js';
import { createHttpUpstream } from '../http/http-upstream.js';
import { createChatStreamDecoder } from './chat-stream-wire.js';
import { buildChatRequest, parseChatReply } from './chat-wire.js';
import type { OpenAiCoreOptions } from './openai-config.js';

export type { OpenAiCoreOptions } from './openai-config.js';

export function createOpenAiCore(options: OpenAiCoreOptions): CoreAdapter {
  const upstream = createHttpUpstream({
    label: 'openai core',
    url: chatCompletionsUrl(options.baseUrl),
    headers: requestHeaders(options.apiKey),
    settings: options,
    statusHints: STATUS_HINTS,
  });
  const timeouts = {
    firstItemMs: options.firstTokenTimeoutMs,
    gapMs: options.tokenGapTimeoutMs,
  };
  return {
    name: 'openai',
    gateway: true,
    capacity: options.maxConnections,
    async reply(request) {
      const body = JSON.stringify(buildChatRequest(options, request));
      const { text, usage, finish } = await upstream.post(body, request.signal, parseChatReply);
      if (usage) request.onUsage?.(usage);
      if (finish) request.onFinish?.(finish);
      return text;
    },
    stream(request) {
      const body = JSON.stringify(buildChatRequest(options, request, true));
      return upstream.stream(body, request.signal, createChatStreamDecoder, timeouts);
    },
    close: () => upstream.close(),
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

/** Hints for operators reading the log; they name variables, never their values. */
const STATUS_HINTS: Readonly<Record<number, string>> = {
  401: '; check PLAUDER_OPENAI_API_KEY',
  403: '; check PLAUDER_OPENAI_API_KEY',
  404: '; check PLAUDER_OPENAI_BASE_URL and PLAUDER_OPENAI_MODEL',
};
