/**
 * @module routes/api/client-signal
 * An `AbortSignal` that fires when the client goes away before its response is complete.
 *
 * Not Fastify's `request.signal`, nor the request's `close` event: Node emits that one as
 * soon as the request body has been read. The response's `close` without `finish` is
 * the connection going away while the answer was still being prepared or sent.
 */
import type { FastifyReply } from 'fastify';

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

export function clientSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const response = reply.raw;
  const onClose = () => {
    if (!response.writableFinished) controller.abort(CLIENT_CLOSED);
  };
  if (response.destroyed || reply.request.raw.socket?.destroyed) onClose();
  else response.once('close', onClose);
  return controller.signal;
}
