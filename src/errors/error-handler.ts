/**
 * @module errors/error-handler
 * The one error handler and the 404 handler: every failure leaves as the contract's
 * envelope. 500s carry no internal detail; what is logged is made safe by `safeError`.
 */
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance } from 'fastify';
import { ApiError, errorBody } from './api-error.js';
import type { ErrorCode } from './error-codes.js';
import { safeError } from './safe-error.js';

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.statusCode >= 500) {
      request.log.error(
        { error: safeError(apiError.cause ?? error), code: apiError.code },
        'request failed',
      );
    }
    request.errorCode = apiError.code;
    return reply
      .code(apiError.statusCode)
      .headers(apiError.headers)
      .send(errorBody(apiError.code, request.id));
  });

  app.setNotFoundHandler((request, reply) => {
    request.errorCode = 'not_found';
    return reply.code(404).send(errorBody('not_found', request.id));
  });
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (an unknown method, two
 * Content-Length lines, a broken chunk, oversized headers) get the envelope too, and the
 * connection is closed. Fastify's default handler answers without our headers and, at
 * trace level, logs the parser's error with its `rawPacket`: the raw request, bearer key
 * and body included. Here only the error's type and code are logged (`safeError`).
 */
export function clientErrorHandler(
  this: FastifyInstance,
  error: Error & { code?: string },
  socket: Socket,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  this.log.debug({ error: safeError(error) }, 'malformed request refused');
  if (socket.writable) {
    const requestId = randomUUID();
    const body = JSON.stringify(errorBody('bad_request', requestId));
    socket.write(
      'HTTP/1.1 400 Bad Request\r\n' +
        'cache-control: no-store\r\n' +
        `x-request-id: ${requestId}\r\n` +
        'content-type: application/json; charset=utf-8\r\n' +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        'connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}

function toApiError(error: FastifyError | ApiError): ApiError {
  if (error instanceof ApiError) return error;
  const status = error.statusCode ?? 500;
  let code: ErrorCode = 'internal_error';
  if (status === 413) code = 'payload_too_large';
  else if (status === 404) code = 'not_found';
  else if (status >= 400 && status < 500) code = 'bad_request';
  return Object.assign(new ApiError(code), { cause: error });
}

declare module 'fastify' {
  interface FastifyRequest {
    errorCode?: ErrorCode;
  }
}
