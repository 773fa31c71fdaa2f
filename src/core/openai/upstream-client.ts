/**
 * @module core/openai/upstream-client
 * One POST of a JSON body to the upstream over a dedicated keep-alive pool (`node:http` /
 * `node:https` Agent). Failures are returned as values so the retry loop can classify them.
 *
 * Why `node:http` and not the global `fetch`: the global fetch shares one process-wide pool
 * that `close()` must not destroy, and its WHATWG stream layer adds per-request overhead; a
 * private Agent gives lowest latency, a clean `close()`, and per-attempt timeouts that simply
 * destroy the request.
 */

import http from 'node:http';
import https from 'node:https';

export interface UpstreamResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
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
  /** Node refused to build the request (e.g. a header value with a newline): never retried. */
  | { readonly kind: 'unsendable'; readonly code: string };

export type AttemptResult =
  | { readonly ok: true; readonly response: UpstreamResponse }
  | { readonly ok: false; readonly failure: AttemptFailure };

export interface UpstreamClient {
  post(body: string, signal: AbortSignal, timeoutMs: number): Promise<AttemptResult>;
  close(): void;
}

/** A chat completion is a few KiB; anything near this is not a reply we could use. */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
/**
 * Idle pooled sockets are closed after this long unless the server's `Keep-Alive: timeout=`
 * hint is shorter (Node honours the hint). 4 s stays below the 5 s idle timeout of uvicorn
 * (vLLM), llama.cpp's server and Node, so we rarely write to a socket the server is closing.
 */
const IDLE_SOCKET_MS = 4_000;

export function createUpstreamClient(
  url: URL,
  headers: Readonly<Record<string, string>>,
  maxConnections: number,
): UpstreamClient {
  const agentOptions: http.AgentOptions = {
    keepAlive: true,
    maxSockets: maxConnections,
    maxFreeSockets: maxConnections,
    timeout: IDLE_SOCKET_MS,
    // Reuse the most recently used socket so a quiet service keeps one warm connection.
    scheduling: 'lifo',
  };
  const isHttps = url.protocol === 'https:';
  const agent = isHttps ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  const request = isHttps ? https.request : http.request;
  const send = (body: string, signal: AbortSignal, timeoutMs: number) =>
    sendOnce({ url, headers, agent, request, body, signal, timeoutMs });

  return {
    async post(body, signal, timeoutMs) {
      const first = await send(body, signal, timeoutMs);
      if (first.ok || first.failure.kind !== 'connection' || !first.failure.stale) return first;
      // The server closed an idle pooled socket while we were writing to it: the request
      // never reached it, so resend once at once on a fresh socket (as Node's docs advise).
      return send(body, signal, timeoutMs);
    },
    close() {
      agent.destroy();
    },
  };
}

interface SendParams {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly agent: http.Agent;
  readonly request: typeof http.request;
  readonly body: string;
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
}

function sendOnce(params: SendParams): Promise<AttemptResult> {
  const { body, signal, timeoutMs } = params;
  return new Promise((resolve) => {
    let settled = false;
    let gotResponse = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if (!result.ok) req.destroy();
      resolve(result);
    };
    const fail = (failure: AttemptFailure) => finish({ ok: false, failure });
    const onAbort = () => fail({ kind: 'aborted', reason: signal.reason });

    const opened = openRequest(params);
    if (!(opened instanceof http.ClientRequest)) return resolve({ ok: false, failure: opened });
    const req = opened;
    const timer = setTimeout(() => fail({ kind: 'timeout', afterMs: timeoutMs }), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });

    req.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? error.name;
      const stale = req.reusedSocket && !gotResponse && (code === 'ECONNRESET' || code === 'EPIPE');
      fail({ kind: 'connection', code, stale, cause: error });
    });
    req.on('response', (res) => {
      gotResponse = true;
      readBody(res, (outcome) => {
        if (typeof outcome === 'string') {
          finish({
            ok: true,
            response: { status: res.statusCode ?? 0, headers: res.headers, body: outcome },
          });
        } else {
          fail(outcome);
        }
      });
    });
    if (signal.aborted) onAbort();
    else req.end(body);
  });
}

/** Builds the request; Node throws synchronously for e.g. a header value it cannot send. */
function openRequest(params: SendParams): http.ClientRequest | AttemptFailure {
  try {
    return params.request(params.url, {
      method: 'POST',
      agent: params.agent,
      headers: { ...params.headers, 'content-length': String(Buffer.byteLength(params.body)) },
    });
  } catch (error) {
    // ERR_INVALID_CHAR and the like: Node's message names the header, never its value.
    return { kind: 'unsendable', code: (error as NodeJS.ErrnoException).code ?? 'ERR_REQUEST' };
  }
}

/** Collects the body up to `MAX_RESPONSE_BYTES`; reports the text or a failure exactly once. */
function readBody(
  res: http.IncomingMessage,
  done: (outcome: string | AttemptFailure) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) {
      done({ kind: 'too_large', limitBytes: MAX_RESPONSE_BYTES });
      res.destroy();
      return;
    }
    chunks.push(chunk);
  });
  res.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
  // The socket closed mid-body: Node emits 'error' (ECONNRESET) and/or 'close' without 'end'.
  const lost = (cause: unknown, code = 'ECONNRESET') =>
    done({ kind: 'connection', code, stale: false, cause });
  res.on('error', (error: NodeJS.ErrnoException) => lost(error, error.code ?? error.name));
  res.on('close', () => {
    if (!res.complete) lost(new Error('response closed before its end'));
  });
}
