/**
 * @module core/http/upstream-client
 * One POST of a JSON body to the upstream over a dedicated keep-alive pool (undici `Pool`).
 * Failures are returned as values so the retry loop can classify them.
 *
 * Why undici's `Pool` and not `node:http`: on the proxy path the HTTP client is a large
 * part of plauder's own CPU per request, and undici's handler API needs about a third of
 * what an `http.request` through an `http.Agent` does (src/core/openai/README.md). Why not the global
 * `fetch`: it shares one process-wide pool that `close()` must not destroy, and its WHATWG
 * stream layer adds per-request overhead. A private pool gives a clean `close()` and
 * per-attempt timeouts that simply abort the request.
 */

import { validateHeaderName, validateHeaderValue } from 'node:http';
import { type Dispatcher, errors, Pool } from 'undici';
import type { CancelSignal } from '../../util/cancellation.js';

export interface UpstreamResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

export type AttemptFailure =
  | { readonly kind: 'timeout'; readonly afterMs: number }
  | { readonly kind: 'aborted'; readonly reason: unknown }
  | {
      readonly kind: 'connection';
      readonly code: string;
      /** The error hit a reused pooled socket before any response byte arrived. */
      readonly stale: boolean;
      readonly cause: unknown;
    }
  | { readonly kind: 'too_large'; readonly limitBytes: number }
  /** A header value HTTP cannot carry (e.g. a newline in the API key): never retried. */
  | { readonly kind: 'unsendable'; readonly code: string };

export type AttemptResult =
  | { readonly ok: true; readonly response: UpstreamResponse }
  | { readonly ok: false; readonly failure: AttemptFailure };

/**
 * What a streamed attempt tells its reader, in this order: `onStart` once the response's
 * status and headers are in (2xx or not), `onData` for each piece of the body as it arrives,
 * then either `onEnd` or `onFailure`. Nothing is called after `onEnd`, `onFailure` or the
 * reader's own `abort`.
 */
interface StreamReader {
  onStart(status: number, headers: UpstreamResponse['headers']): void;
  onData(chunk: Buffer): void;
  onEnd(): void;
  onFailure(failure: AttemptFailure): void;
}

/** A streamed attempt under way, as its reader controls it. */
export interface StreamControl {
  /** Ends the attempt: the upstream request is aborted now, or as soon as it starts. */
  abort(reason: Error): void;
  /** Stops reading the socket until `resume` (back-pressure). */
  pause(): void;
  resume(): void;
}

/** Headers of one attempt besides the client's fixed ones (trace context); made by us. */
type ExtraHeaders = Readonly<Record<string, string>> | undefined;

export interface UpstreamClient {
  post(
    body: string,
    signal: CancelSignal,
    timeoutMs: number,
    extra?: ExtraHeaders,
  ): Promise<AttemptResult>;
  /**
   * POSTs `body` and hands the response to `reader` as it streams (undici's handler API:
   * no stream or promise per piece). The caller keeps its own timers and ends the attempt
   * with the returned control.
   */
  stream(body: string, reader: StreamReader, extra?: ExtraHeaders): StreamControl;
  close(): Promise<void>;
}

/** A chat completion is a few KiB; anything near this is not a reply we could use. */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
/**
 * Idle pooled sockets are closed after this long unless the server's `Keep-Alive: timeout=`
 * hint is shorter (undici honours the hint). 4 s stays below the 5 s idle timeout of uvicorn
 * (vLLM), llama.cpp's server and Node, so we rarely write to a socket the server is closing.
 */
const IDLE_SOCKET_MS = 4_000;

export function createUpstreamClient(
  url: URL,
  headers: Readonly<Record<string, string>>,
  maxConnections: number,
): UpstreamClient {
  const refused = unsendableHeader(headers);
  const pool = new Pool(url.origin, {
    connections: maxConnections,
    keepAliveTimeout: IDLE_SOCKET_MS,
    keepAliveMaxTimeout: IDLE_SOCKET_MS,
    maxResponseSize: MAX_RESPONSE_BYTES,
    // The attempt's own timer bounds the whole exchange; these would only cut it shorter.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const path = `${url.pathname}${url.search}`;
  const send = (body: string, signal: CancelSignal, timeoutMs: number, all: typeof headers) =>
    sendOnce(pool, { path, headers: all, body, signal, timeoutMs });
  const withExtra = (extra: ExtraHeaders) =>
    extra === undefined ? headers : { ...headers, ...extra };

  return {
    async post(body, signal, timeoutMs, extra) {
      if (refused) return { ok: false, failure: refused };
      const all = withExtra(extra);
      const first = await send(body, signal, timeoutMs, all);
      if (first.ok || first.failure.kind !== 'connection' || !first.failure.stale) return first;
      // The server closed an idle pooled socket while we were writing to it: the request
      // never reached it, so resend once at once on a fresh socket.
      return send(body, signal, timeoutMs, all);
    },
    stream(body, reader, extra) {
      return streamOnce(pool, { path, headers: withExtra(extra), body }, reader, refused);
    },
    async close() {
      await pool.destroy();
    },
  };
}

/**
 * One streamed attempt on undici's handler API. Like `post`, it resends once at once when
 * a reused pooled socket turned out closed before any response byte (the request never
 * reached the server).
 */
function streamOnce(
  pool: Pool,
  request: Pick<SendParams, 'path' | 'headers' | 'body'>,
  reader: StreamReader,
  refused: AttemptFailure | undefined,
): StreamControl {
  let controller: Dispatcher.DispatchController | undefined;
  let stopReason: Error | undefined;
  let paused = false;
  let over = false;
  let resent = false;
  const fail = (failure: AttemptFailure) => {
    if (over) return;
    over = true;
    reader.onFailure(failure);
  };
  const dispatch = () => {
    let responded = false;
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        if (stopReason) started.abort(stopReason);
        else if (paused) started.pause();
      },
      onResponseStart(_controller, statusCode, responseHeaders) {
        // 1xx informational responses come before the real one.
        if (statusCode < 200 || over) return;
        responded = true;
        reader.onStart(statusCode, responseHeaders);
      },
      onResponseData(_controller, chunk) {
        if (!over) reader.onData(chunk);
      },
      onResponseEnd() {
        if (over) return;
        over = true;
        reader.onEnd();
      },
      onResponseError(_controller, error) {
        if (over || stopReason) return;
        const failure = classify(error, responded);
        if (failure.kind === 'connection' && failure.stale && !resent) {
          resent = true;
          controller = undefined;
          dispatch();
          return;
        }
        fail(failure);
      },
    };
    try {
      pool.dispatch(
        { path: request.path, method: 'POST', headers: request.headers, body: request.body },
        handler,
      );
    } catch (error) {
      // A closed pool refuses at once; told on the next tick, after the caller has its control.
      process.nextTick(fail, classify(error, false));
    }
  };
  if (refused) process.nextTick(fail, refused);
  else dispatch();
  return {
    abort(reason) {
      if (over) return;
      over = true;
      stopReason = reason;
      if (controller && !controller.aborted) controller.abort(reason);
    },
    pause() {
      paused = true;
      controller?.pause();
    },
    resume() {
      paused = false;
      controller?.resume();
    },
  };
}

interface SendParams {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly signal: CancelSignal;
  readonly timeoutMs: number;
}

/**
 * One attempt on undici's handler API (`dispatch`), which skips the stream and promise
 * layers of `request()`: the body is a few KiB read into memory anyway. The attempt ends
 * when the first of these happens: the response is complete, the connection fails, the
 * attempt's timer fires, the caller aborts, or the body grows past the pool's limit. A request
 * still queued for a connection when the attempt ends is aborted as soon as it starts.
 */
function sendOnce(pool: Pool, params: SendParams): Promise<AttemptResult> {
  const { signal, timeoutMs } = params;
  if (signal.aborted) {
    return Promise.resolve({ ok: false, failure: { kind: 'aborted', reason: signal.reason } });
  }
  return new Promise((resolve) => {
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    let stopReason: Error | undefined;
    let responded = false;
    let status = 0;
    let headers: UpstreamResponse['headers'] = {};
    const chunks: Buffer[] = [];

    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    /** Our side ends the attempt: the request is aborted now, or when it starts. */
    const stop = (failure: AttemptFailure, reason: Error) => {
      stopReason = reason;
      // Settle first: aborting makes undici report the abort as an error at once.
      finish({ ok: false, failure });
      if (controller && !controller.aborted) controller.abort(reason);
    };
    const onAbort = () =>
      stop({ kind: 'aborted', reason: signal.reason }, new Error('aborted by the caller'));
    const timer = setTimeout(
      () => stop({ kind: 'timeout', afterMs: timeoutMs }, new Error('attempt timed out')),
      timeoutMs,
    );
    signal.addEventListener('abort', onAbort, { once: true });

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        if (stopReason) started.abort(stopReason);
      },
      onResponseStart(_controller, statusCode, responseHeaders) {
        // 1xx informational responses come before the real one.
        if (statusCode < 200) return;
        responded = true;
        status = statusCode;
        headers = responseHeaders;
      },
      onResponseData(_controller, chunk) {
        // The pool's `maxResponseSize` ends a longer body with an error.
        chunks.push(chunk);
      },
      onResponseEnd() {
        const body = Buffer.concat(chunks).toString('utf8');
        finish({ ok: true, response: { status, headers, body } });
      },
      onResponseError(_controller, error) {
        finish({ ok: false, failure: classify(error, responded) });
      },
    };
    try {
      pool.dispatch(
        { path: params.path, method: 'POST', headers: params.headers, body: params.body },
        handler,
      );
    } catch (error) {
      // A closed pool refuses at once.
      finish({ ok: false, failure: classify(error, false) });
    }
  });
}

function classify(error: unknown, responded: boolean): AttemptFailure {
  if (error instanceof errors.ResponseExceededMaxSizeError) {
    return { kind: 'too_large', limitBytes: MAX_RESPONSE_BYTES };
  }
  const code = errorCode(error);
  return { kind: 'connection', code, stale: !responded && isStale(error, code), cause: error };
}

/**
 * A socket closed under a request before its response began, on a socket that had already
 * carried a response: the server closed it as idle while we wrote. For a closed socket undici
 * reports how much it read in all (more than nothing means an earlier exchange used it); a
 * reset carries no such detail and counts as stale, which costs at most one extra send.
 */
function isStale(error: unknown, code: string): boolean {
  if (error instanceof errors.SocketError) return (error.socket?.bytesRead ?? 0) > 0;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

function errorCode(error: unknown): string {
  if (typeof error !== 'object' || error === null) return 'ERR_UPSTREAM';
  const { code, name } = error as { code?: unknown; name?: unknown };
  if (typeof code === 'string') return code;
  return typeof name === 'string' ? name : 'ERR_UPSTREAM';
}

/**
 * The headers are fixed for the client's life, so they are checked once: Node's own
 * validation names the problem (ERR_INVALID_CHAR) and never the value, which may be a key.
 */
function unsendableHeader(headers: Readonly<Record<string, string>>): AttemptFailure | undefined {
  try {
    for (const [name, value] of Object.entries(headers)) {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    }
    return undefined;
  } catch (error) {
    return { kind: 'unsendable', code: errorCode(error) };
  }
}
