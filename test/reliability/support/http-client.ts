/**
 * A small keep-alive HTTP client on `node:http` for load and fuzzing: it sends exactly the
 * method, path, headers and bytes it is given (duplicate header lines included), and reads
 * the answer as bytes. `fetch` would normalise or refuse much of what these tests send.
 */
import http from 'node:http';

export interface RawRequest {
  readonly method: string;
  /** Path and query as sent on the request line. */
  readonly path: string;
  /** An array value sends one header line per element. */
  readonly headers?: Readonly<Record<string, string | string[]>>;
  readonly body?: Buffer;
}

export interface RawResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  /** The body parsed as JSON, or undefined. */
  readonly json: any;
  readonly text: string;
}

export interface HttpClient {
  send(request: RawRequest, timeoutMs?: number): Promise<RawResponse>;
  /** Closes the pooled sockets. */
  close(): void;
}

export function createHttpClient(baseUrl: string, connections = 32): HttpClient {
  const { hostname, port } = new URL(baseUrl);
  // Idle pooled sockets are dropped after 4 s, before the server's keep-alive timeout (5 s
  // by default) closes them: a request written to a socket the server is closing that very
  // moment would fail with "socket hang up", as it would for any such client.
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections, timeout: 4_000 });
  return {
    send(request, timeoutMs = 15_000) {
      // Node frames a GET/DELETE body only when told how: without Content-Length the bytes
      // would follow the request unframed and be read as the next request.
      const framed =
        request.body === undefined ||
        request.headers?.['content-length'] !== undefined ||
        request.headers?.['transfer-encoding'] !== undefined;
      const headers = framed
        ? request.headers
        : { ...request.headers, 'content-length': String(request.body?.length ?? 0) };
      return new Promise<RawResponse>((resolve, reject) => {
        const req = http.request(
          {
            host: hostname,
            port,
            agent,
            method: request.method,
            path: request.path,
            headers: headers as http.OutgoingHttpHeaders,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('error', reject);
            res.on('end', () => {
              const body = Buffer.concat(chunks);
              const text = body.toString('utf8');
              let json: unknown;
              try {
                json = text.length > 0 ? JSON.parse(text) : undefined;
              } catch {
                json = undefined;
              }
              resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json, text });
            });
          },
        );
        req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
        req.on('error', reject);
        req.end(request.body);
      });
    },
    close: () => agent.destroy(),
  };
}

/** A JSON chat request with a bearer key. */
export function chatRequest(
  key: string,
  body: unknown,
  path = '/api/chat',
): RawRequest & { body: Buffer } {
  return {
    method: 'POST',
    path,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(body)),
  };
}

export function isReply(res: RawResponse): boolean {
  return (
    res.status === 200 &&
    typeof res.json?.reply === 'string' &&
    res.json.error === undefined &&
    res.json.reply.length > 0
  );
}
