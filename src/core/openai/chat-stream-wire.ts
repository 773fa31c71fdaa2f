/**
 * @module core/openai/chat-stream-wire
 * Reads a streamed Chat Completions answer (Server-Sent Events of `chat.completion.chunk`
 * objects, ended by `data: [DONE]`) into the core's chunks: each `choices[0].delta.content`
 * as a delta, the `usage` of the last chunk as token counts. The events are parsed with
 * eventsource-parser, which follows the SSE specification (line endings, comments, fields
 * split across network packets).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { CoreChunk, JsonObject } from '../core-adapter.js';
import type { StreamDecoder } from '../http/http-stream.js';
import type { BodyReading } from '../http/http-upstream.js';
import { isObject, readUsage } from './chat-wire.js';

export function createChatStreamDecoder(): StreamDecoder<CoreChunk> {
  let items: CoreChunk[] = [];
  let problem: string | undefined;
  let done = false;
  /** A choice said why it finished: the answer is whole even if `[DONE]` never comes. */
  let finished = false;
  const parser = createParser({
    onEvent(event) {
      if (done || problem !== undefined) return;
      const read = readEvent(event);
      if (read === 'done') done = true;
      else if (typeof read === 'string') problem = read;
      else {
        if (read.some((chunk) => chunk.type === 'finish')) finished = true;
        items.push(...read);
      }
    },
  });
  const take = (): BodyReading<readonly CoreChunk[]> => {
    if (problem !== undefined) return { ok: false, problem };
    const taken = items;
    items = [];
    return { ok: true, value: taken };
  };
  return {
    push(text) {
      parser.feed(text);
      return take();
    },
    end() {
      parser.reset({ consume: true });
      const last = take();
      // An upstream that closes without `[DONE]` or a finish reason may have been cut off
      // mid-reply; some servers end with the finish reason alone.
      if (last.ok && !done && !finished) {
        return { ok: false, problem: 'the stream ended without [DONE]' };
      }
      return last;
    },
  };
}

/** One event: chunks, `done`, or a problem (named, never quoting the upstream's text). */
function readEvent(event: EventSourceMessage): readonly CoreChunk[] | 'done' | string {
  if (event.data.trim() === '[DONE]') return 'done';
  let json: unknown;
  try {
    json = JSON.parse(event.data);
  } catch {
    return 'an event is not JSON';
  }
  if (!isObject(json)) return 'an event is not a JSON object';
  if (json.error !== undefined) return 'the upstream sent an error event';
  const chunks: CoreChunk[] = [];
  const choice: unknown = Array.isArray(json.choices) ? json.choices[0] : undefined;
  if (isObject(choice) && isObject(choice.delta)) {
    const content = choice.delta.content;
    if (typeof content === 'string' && content !== '')
      chunks.push({ type: 'delta', text: content });
    const calls = choice.delta.tool_calls;
    if (Array.isArray(calls)) {
      if (!calls.every(isObject)) return 'a tool-call delta is not a JSON object';
      if (calls.length > 0) chunks.push({ type: 'tool_calls', deltas: calls as JsonObject[] });
    }
  }
  if (isObject(choice) && typeof choice.finish_reason === 'string') {
    chunks.push({ type: 'finish', reason: choice.finish_reason });
  }
  const usage = readUsage(json.usage);
  // The usage chunk names the model that answered, as the plain answer does.
  const model = typeof json.model === 'string' && json.model !== '' ? { model: json.model } : {};
  if (usage) chunks.push({ type: 'usage', ...usage, ...model });
  return chunks;
}
