/**
 * @module core/rasa/create-rasa-core
 * The `rasa` core: replies come from an existing Rasa bot through its REST channel; plauder
 * adds keys, quotas and usage in front of it. Timeouts, retries, cancellation and the failure
 * mapping are the shared HTTP upstream's (src/core/http/http-upstream.ts).
 *
 * The bot keeps the conversation itself, in its tracker, by `sender`: the session's
 * `conversationId` (a keyed hash, stable for one key and sessionId), or a fresh random sender
 * for a turn without a session. plauder's memory window is therefore not sent.
 */

import { randomUUID } from 'node:crypto';
import type { CoreAdapter, Language } from '../core-adapter.js';
import { createHttpUpstream, type HttpUpstream } from '../http/http-upstream.js';
import type { RasaCoreOptions } from './rasa-config.js';
import { buildWebhookRequest, readRasaAnswer } from './rasa-wire.js';

export type { RasaCoreOptions } from './rasa-config.js';

export function createRasaCore(options: RasaCoreOptions): CoreAdapter {
  const upstreams = createUpstreams(options);
  const pools = new Set(Object.values(upstreams)).size;
  return {
    name: 'rasa',
    // Turns of both languages share one pool when they share one webhook.
    capacity: options.maxConnections * pools,
    async reply(request) {
      const { language } = request;
      const sender = request.conversationId ?? randomUUID();
      const body = JSON.stringify(buildWebhookRequest(sender, request));
      const answer = await upstreams[language].post(body, request.signal, (text) =>
        readRasaAnswer(text, language),
      );
      if (answer.blocks.length > 0) return answer.blocks.join('\n\n');
      const { messages } = answer;
      request.onNotice?.({ kind: 'empty_answer', core: 'rasa', language, messages });
      return options.fallbacks[language];
    },
    async close() {
      await Promise.all([...new Set(Object.values(upstreams))].map((upstream) => upstream.close()));
    },
  };
}

/** One pooled upstream per distinct webhook: one for a bot that speaks both languages. */
function createUpstreams(options: RasaCoreOptions): Record<Language, HttpUpstream> {
  const open = (webhook: string) =>
    createHttpUpstream({
      label: 'rasa core',
      targets: [{ url: new URL(webhook), headers: HEADERS }],
      settings: options,
      statusHints: STATUS_HINTS,
    });
  const de = open(options.webhooks.de);
  const en = options.webhooks.en === options.webhooks.de ? de : open(options.webhooks.en);
  return { de, en };
}

const HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'application/json',
  accept: 'application/json',
  'user-agent': 'plauder',
};

/** Hints for operators reading the log; they name variables, never their values. */
const STATUS_HINTS: Readonly<Record<number, string>> = {
  404: '; check PLAUDER_RASA_URL* and that credentials.yml enables the rest channel',
};
