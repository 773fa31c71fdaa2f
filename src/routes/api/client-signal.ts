/**
 * @module routes/api/client-signal
 * An `AbortSignal` that fires when the client goes away before its response is complete.
 *
 * Not Fastify's `request.signal`, nor the request's `close` event: Node emits that one as
 * soon as the request body has been read. The response's `close` without `finish` is
 * the connection going away while the answer was still being prepared or sent.
 */
import type { FastifyReply } from 'fastify';
import type { ClientSignal } from '../../chat/client-signal.js';

export class ClientClosedError extends Error {
  override readonly name = 'ClientClosedError';
  constructor() {
    super('the client closed the connection before the response was complete');
  }
}

/**
 * The reason of every such abort: one instance, since an Error records its stack when it
 * is made, and that cost more than the rest of this module per request.
 */
const CLIENT_CLOSED = new ClientClosedError();

export function clientSignal(reply: FastifyReply): ClientSignal {
  return new ResponseSignal(reply);
}

/**
 * Not an AbortController: on Node 20 every AbortSignal outlives the young generation (V8
 * promotes it), so one per request made each scavenge copy megabytes and pause for
 * milliseconds (bench/README.md, "Garbage the request path leaves"). This is a plain object
 * that notes the response's early `close`.
 */
class ResponseSignal implements ClientSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;

  constructor(reply: FastifyReply) {
    const response = reply.raw;
    if (response.destroyed || reply.request.raw.socket?.destroyed) this.abort();
    else
      response.once('close', () => {
        if (!response.writableFinished) this.abort();
      });
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.listeners === undefined) this.listeners = [listener];
    else this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const index = this.listeners?.indexOf(listener) ?? -1;
    if (index >= 0) this.listeners?.splice(index, 1);
  }

  private abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = CLIENT_CLOSED;
    const listeners = this.listeners ?? [];
    this.listeners = undefined;
    for (const listener of listeners) listener();
  }
}
