/**
 * @module routes/mcp/mcp-routes
 * `/mcp`: the Model Context Protocol over the Streamable HTTP transport (docs/contract.md, "MCP"), a
 * front door of the turn use case like `/api/chat`, with the same bearer keys.
 *
 * Stateless: every POST gets an MCP server and transport of its own, which end with it.
 * No MCP session lives in one process's memory, so any instance behind a load balancer
 * answers any request, and memory stays in plauder's sessions (`sessionId`), which all
 * instances share through the database. Answers are plain JSON (one request, one answer;
 * the tools send no progress or server-initiated messages); `GET` (a stream for server
 * messages) and `DELETE` (ending an MCP session) are not offered: 405, as the transport's
 * specification allows.
 *
 * The SDK's Web-standard transport answers with a `Response` that is written through
 * Fastify's reply, so the hooks of every route (request id, no-store, the log line and
 * the metrics) apply here too.
 *
 * The SDK (and its schema libraries) is loaded at the first MCP request, not at start:
 * a service whose clients never speak MCP starts without those modules.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Handover, TakeTurn } from '../../chat/take-turn.js';
import { ApiError } from '../../errors/api-error.js';
import { rateLimitHeaders } from '../../quota/quota-service.js';
import type { AppDeps } from '../../services.js';
import { type AuthenticatedKey, authenticateBeforeBody } from '../authenticate.js';
import { clientSignal, handedOver, turnWaitHook } from '../client-signal.js';
import { errorResponses } from '../responses.js';
import { bearerSecurity } from '../schemas.js';
import { checkMcpInput, type JsonRpcError } from './mcp-input.js';
import { mcpAnswers, mcpIdempotencyKeyHeader, mcpMessageSchema } from './mcp-schemas.js';
import type { McpServerDeps } from './mcp-server.js';
import { toolDefinitions } from './mcp-tools.js';

export const MCP_ROUTE = '/mcp';

export interface McpRouteDeps extends AppDeps {
  readonly takeTurn: TakeTurn;
  readonly version: string;
}

export async function mcpRoutes(app: FastifyInstance, deps: McpRouteDeps): Promise<void> {
  const serverDeps: McpServerDeps = {
    services: deps.services,
    takeTurn: deps.takeTurn,
    tools: toolDefinitions(deps.services.config),
    version: deps.version,
  };
  const { hook: authenticateFirst, keyOf } = authenticateBeforeBody(deps.services);

  app.post(
    MCP_ROUTE,
    {
      schema: {
        summary:
          'MCP (Model Context Protocol) over Streamable HTTP: tools chat, usage, forget_session',
        description:
          'A JSON-RPC 2.0 message (or a batch) of the Model Context Protocol: `initialize`, ' +
          '`tools/list`, `tools/call` with the tools `chat` (counted like a chat request when ' +
          'it replies), `usage` and `forget_session`. Send `Accept: application/json, ' +
          'text/event-stream`. Stateless: no `Mcp-Session-Id` is issued. Refusals and ' +
          'failures of a tool are results with `isError: true`; malformed JSON-RPC gets a ' +
          'JSON-RPC error (400, 406 or 415).',
        tags: ['mcp'],
        security: bearerSecurity,
        headers: mcpIdempotencyKeyHeader,
        body: mcpMessageSchema,
        response: {
          ...mcpAnswers,
          202: { type: 'null', description: 'Notifications or responses only: accepted.' },
          ...errorResponses(['invalid_api_key', 'payload_too_large', 'internal_error']),
        },
      },
      // The schemas document the messages; the MCP transport and the tools judge them.
      validatorCompiler: () => () => true,
      onRequest: authenticateFirst,
    },
    (request, reply) => handleMcp(serverDeps, keyOf(request), request, reply),
  );

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: MCP_ROUTE,
      schema: {
        summary: `MCP ${method === 'GET' ? 'server-sent event stream' : 'session end'}: not offered (stateless)`,
        tags: ['mcp'],
        security: bearerSecurity,
        response: errorResponses(['invalid_api_key', 'method_not_allowed']),
      },
      onRequest: authenticateFirst,
      handler: async () => {
        throw new ApiError('method_not_allowed', { allow: 'POST' });
      },
    });
  }
}

/** The MCP server and the SDK's transport, imported at the first MCP request. */
async function importSdk() {
  const [server, transport] = await Promise.all([
    import('./mcp-server.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  ]);
  return {
    createMcpServer: server.createMcpServer,
    Transport: transport.WebStandardStreamableHTTPServerTransport,
  };
}

let sdk: ReturnType<typeof importSdk> | undefined;

async function handleMcp(
  deps: McpServerDeps,
  key: AuthenticatedKey,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const input = checkMcpInput(request.headers['content-type'], request.body);
  if (!input.ok) return reply.code(input.status).send(input.answer);
  // Every call of the POST was refused here: nothing for the SDK to do.
  if (input.body === undefined && input.refused.length > 0) {
    return reply.code(200).send(input.batch ? input.refused : input.refused[0]);
  }
  const signal = clientSignal(reply);
  sdk ??= importSdk();
  const { createMcpServer, Transport } = await sdk;
  const handover = new ResponseHandover();
  const server = createMcpServer(deps, {
    key,
    signal,
    handover,
    handedOver: handedOver(reply),
    onWait: turnWaitHook(request),
    idempotencyKey: request.headers['idempotency-key'],
    log: request.log,
    recordChat: (outcome, decision) => {
      request.chatOutcome = outcome;
      // The quota headers of a chat answer (docs/contract.md, "Monthly quota"), on the POST that carried the call.
      if (decision && 'quota' in decision) reply.headers(rateLimitHeaders(decision.quota));
      if (decision && 'replayed' in decision && decision.replayed) {
        reply.header('idempotent-replayed', 'true');
      }
    },
  });
  const transport = new Transport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  try {
    await server.connect(transport);
    const response = await transport.handleRequest(webRequest(request, input.body));
    const body = withRefused(Buffer.from(await response.arrayBuffer()), input.refused);
    // The chat calls' replies count only if this answer leaves to a client still there.
    await handover.settle(!signal.aborted);
    // Nobody is there to answer; the request was logged when its connection closed.
    if (signal.aborted) return reply.hijack();
    reply.code(input.refused.length > 0 && response.status === 202 ? 200 : response.status);
    response.headers.forEach((value, name) => {
      reply.header(name, value);
    });
    if (input.refused.length > 0) reply.header('content-type', 'application/json');
    return reply.send(body.length > 0 ? body : undefined);
  } finally {
    // A request that failed before its answer was ready delivered nothing.
    await handover.settle(false);
    await server.close();
  }
}

/** The chat turns of one POST, settled when its answer is ready to leave (see Handover). */
class ResponseHandover implements Handover {
  readonly ready: Promise<boolean>;
  private settleReady: (delivered: boolean) => void = () => {};
  private readonly work: Promise<unknown>[] = [];

  constructor() {
    this.ready = new Promise((resolve) => {
      this.settleReady = resolve;
    });
  }

  pending(work: Promise<unknown>): void {
    this.work.push(work);
  }

  async settle(delivered: boolean): Promise<void> {
    this.settleReady(delivered);
    await Promise.allSettled(this.work);
  }
}

/** A batch's answers with those of the calls refused before the SDK (mcp-input.ts). */
function withRefused(body: Buffer, refused: readonly JsonRpcError[]): Buffer {
  if (refused.length === 0) return body;
  let answers: unknown = [];
  if (body.length > 0) {
    try {
      answers = JSON.parse(body.toString('utf8'));
    } catch {
      return body;
    }
  }
  const list = Array.isArray(answers) ? answers : [answers];
  return Buffer.from(JSON.stringify([...list, ...refused]));
}

/** The request as the SDK's Web-standard transport reads it, with the bytes to read. */
function webRequest(request: FastifyRequest, body: Buffer | undefined): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    // The body may be shorter than the one received (calls refused before the SDK).
    if (value === undefined || name === 'content-length') continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return new Request(new URL(request.url, 'http://plauder.invalid'), {
    method: request.method,
    headers,
    ...(body ? { body } : {}),
  });
}
