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

  // A known path with another method is 405 with `Allow`, not 404.
  const routes: Array<{ method: string; path: RegExp }> = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat())
      routes.push({ method, path: pathPattern(route.url) });
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '';
    const allow = [...new Set(routes.filter((r) => r.path.test(path)).map((r) => r.method))];
    // The method is offered but the router refused the path (an over-long parameter): 404.
    if (allow.length > 0 && !allow.includes(request.method)) {
      request.errorCode = 'method_not_allowed';
      return reply
        .code(405)
        .header('allow', allow.sort().join(', '))
        .send(errorBody('method_not_allowed', request.id));
    }
    request.errorCode = 'not_found';
    return reply.code(404).send(errorBody('not_found', request.id));
  });
}

/** `/api/sessions/:sessionId` → a pattern matching `/api/sessions/<one segment>`. */
function pathPattern(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z0-9_]+)/)
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (an unknown method, two
 * Content-Length lines, a broken chunk, oversized headers) get the envelope too, and the
 * connection is closed. A client too slow to send its headers or its whole request
 * (`PLAUDER_HEADERS_TIMEOUT`, `PLAUDER_REQUEST_TIMEOUT`) gets 408 `request_timeout`. Fastify's default handler answers without our headers and, at
 * trace level, logs the parser's error with its `rawPacket`: the raw request, bearer key
 * and body included. Here only the error's type and code are logged (`safeError`).
 */
export function clientErrorHandler(
  this: FastifyInstance,
  error: Error & { code?: string },
  socket: Socket,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code: ErrorCode =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request_timeout' : 'bad_request';
  this.log.debug({ error: safeError(error) }, 'malformed or slow request refused');
  // A response already under way must not be followed by a second one on the same socket.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const requestId = randomUUID();
    const body = JSON.stringify(errorBody(code, requestId));
    socket.write(
      `HTTP/1.1 ${STATUS_LINES[code]}\r\n` +
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

const STATUS_LINES = { bad_request: '400 Bad Request', request_timeout: '408 Request Timeout' };

/**
 * The one mapping of an error the framework raised (a body too large, bad JSON framing, a
 * route's 404) to a code of the closed list; every door renders the code in its own shape.
 */
export function toApiError(error: FastifyError | ApiError): ApiError {
  if (error instanceof ApiError) return error;
  const status = error.statusCode ?? 500;
  let code: ErrorCode = 'internal_error';
  if (status === 413) code = 'payload_too_large';
  else if (status === 408) code = 'request_timeout';
  else if (status === 404) code = 'not_found';
  else if (status >= 400 && status < 500) code = 'bad_request';
  return Object.assign(new ApiError(code), { cause: error });
}

declare module 'fastify' {
  interface FastifyRequest {
    errorCode?: ErrorCode;
  }
}
