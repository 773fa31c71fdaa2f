/**
 * @module routes/client-signal
 * A cancel signal that fires when the client goes away before its response is complete.
 *
 * Not Fastify's `request.signal`, nor the request's `close` event: Node emits that one as
 * soon as the request body has been read. The response's `close` without `finish` is
 * the connection going away while the answer was still being prepared or sent.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Cancellation, type CancelSignal } from '../util/cancellation.js';

class ClientClosedError extends Error {
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

export function clientSignal(reply: FastifyReply): CancelSignal {
  return new ResponseSignal(reply);
}

/** Aborts with the one CLIENT_CLOSED when the response closes before it finished. */
class ResponseSignal extends Cancellation {
  constructor(reply: FastifyReply) {
    super();
    const response = reply.raw;
    if (response.destroyed || reply.request.raw.socket?.destroyed) this.abort(CLIENT_CLOSED);
    else
      response.once('close', () => {
        if (!response.writableFinished) this.abort(CLIENT_CLOSED);
      });
  }
}

/**
 * Settles when the response is over: true when its last byte was handed to the socket, false
 * when the connection went first (docs/contract.md, "Burst limits": a key's place is held
 * until then; "The client goes away": a JSON answer reached the client only when whole).
 */
export function handedOver(reply: FastifyReply): Promise<boolean> {
  const response = reply.raw;
  // The socket as it is now: by the time the response closes it may have been detached.
  const socket = reply.request.raw.socket;
  // A response whose socket failed while it was written reports itself finished all the
  // same; the socket's error tells that the rest never left.
  const whole = () => response.writableFinished && !socket?.errored;
  if (response.writableFinished || response.destroyed) return Promise.resolve(whole());
  return new Promise((resolve) => response.once('close', () => resolve(whole())));
}

/** The turn hooks every door passes: how long the turn waited, for its log line. */
export function turnWaitHook(request: FastifyRequest): (waitedMs: number) => void {
  return (waitedMs) => {
    request.turnWaitMs = Math.round(waitedMs * 100) / 100;
  };
}
