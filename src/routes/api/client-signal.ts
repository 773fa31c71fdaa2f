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

export function clientSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const response = reply.raw;
  const onClose = () => {
    if (!response.writableFinished) controller.abort(new ClientClosedError());
  };
  if (response.destroyed || reply.request.raw.socket?.destroyed) onClose();
  else response.once('close', onClose);
  return controller.signal;
}
