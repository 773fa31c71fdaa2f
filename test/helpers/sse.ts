/**
 * Reads a Server-Sent Events answer with a real parser (eventsource-parser), recording
 * when each event arrived, so tests see the stream as a client does.
 */
import { createParser } from 'eventsource-parser';

export interface SseEvent {
  /** The `event:` field; undefined for unnamed events (OpenAI's chunks). */
  readonly event: string | undefined;
  readonly data: string;
  /** performance.now() when it was parsed. */
  readonly at: number;
}

export interface SseAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly events: SseEvent[];
  /** Comment lines (`: ping`), without the colon. */
  readonly comments: string[];
  /** The raw text, for answers that were not a stream (a JSON refusal). */
  readonly text: string;
  /** `text` as JSON when it is. */
  readonly json: any;
}

export interface StreamRequest {
  readonly key?: string;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
  readonly signal?: AbortSignal;
  /** Called with each event as it arrives (e.g. to hang up after the first). */
  readonly onEvent?: (event: SseEvent) => void;
}

export async function postStream(url: string, init: StreamRequest = {}): Promise<SseAnswer> {
  const headers: Record<string, string> = {
    accept: 'text/event-stream',
    'content-type': 'application/json',
    ...init.headers,
  };
  if (init.key !== undefined) headers.authorization = `Bearer ${init.key}`;
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify(init.body ?? {}),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  return readSse(response, init.onEvent);
}

export async function readSse(
  response: Response,
  onEvent?: (event: SseEvent) => void,
): Promise<SseAnswer> {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const parser = createParser({
    onEvent(message) {
      const event = { event: message.event, data: message.data, at: performance.now() };
      events.push(event);
      onEvent?.(event);
    },
    onComment: (comment) => comments.push(comment.trim()),
  });
  let text = '';
  const decoder = new TextDecoder();
  if (response.body) {
    for await (const chunk of response.body) {
      const piece = decoder.decode(chunk as Uint8Array, { stream: true });
      text += piece;
      parser.feed(piece);
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, events, comments, text, json };
}

/** The `delta` texts joined, and the `done` reply. */
export function replyOf(answer: SseAnswer): { joined: string; done: string | undefined } {
  const joined = answer.events
    .filter((e) => e.event === 'delta')
    .map((e) => JSON.parse(e.data).text as string)
    .join('');
  const done = answer.events.find((e) => e.event === 'done');
  return { joined, done: done ? (JSON.parse(done.data).reply as string) : undefined };
}

/** Polls `probe` until it returns a value (no fixed sleeps in tests). */
export async function until<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  ms = 10_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}
