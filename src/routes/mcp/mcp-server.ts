/**
 * @module routes/mcp/mcp-server
 * The MCP server of one HTTP request: the tools of mcp-tools.ts, bound to the key that
 * sent the request and to that request's client signal and Idempotency-Key.
 *
 * Built on the SDK's low-level `Server`, not `McpServer`: `McpServer` validates tool
 * arguments with zod before the handler runs, which would judge a bad message before the
 * plan and the quota and in words of its own. Here the arguments go to the same rules as
 * a body of `/api/chat` (`parseChatFields`), and the turn use case decides in the
 * contract's order; the tools advertise plain JSON Schemas of the same rules.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  CancelledNotificationSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Handover, TakeTurn, TurnDecision } from '../../chat/take-turn.js';
import type { Language } from '../../core/core-adapter.js';
import { safeError } from '../../errors/safe-error.js';
import { keyUsage } from '../../quota/key-usage.js';
import type { Services } from '../../services.js';
import { SESSION_ID_PATTERN } from '../../sessions/session-service.js';
import type { CancelSignal } from '../../util/cancellation.js';
import type { AuthenticatedKey } from '../authenticate.js';
import { parseChatFields } from '../request-body.js';
import { LANGUAGES, SERVER_INSTRUCTIONS, TOOL_NAMES, type ToolName } from './mcp-tools.js';
import { errorResult, refused, toolError, turnResult } from './turn-result.js';

export interface McpServerDeps {
  readonly services: Services;
  readonly takeTurn: TakeTurn;
  readonly tools: readonly Tool[];
  readonly version: string;
}

/** The HTTP request a server answers. */
export interface McpCall {
  readonly key: AuthenticatedKey;
  /** Aborts when the client has gone away. */
  readonly signal: CancelSignal;
  /** Where the chat turns learn whether the POST's answer reached its client. */
  readonly handover: Handover;
  /** Settles when the POST's answer is over: the chat turns' places are held until then. */
  readonly handedOver: Promise<boolean>;
  /** Told how long a chat turn waited for its key's place. */
  readonly onWait: (waitedMs: number) => void;
  /** The `Idempotency-Key` header of the POST, if any. */
  readonly idempotencyKey: string | string[] | undefined;
  readonly log: FastifyBaseLogger;
  /**
   * Reports a `chat` call's outcome (for the log line, the metrics and the quota headers)
   * and the turn's decision when the use case was asked.
   */
  readonly recordChat: (outcome: string, decision?: TurnDecision) => void;
}

/** The endpoint of MCP chat turns in an idempotency fingerprint: per reply language. */
const FINGERPRINT_ENDPOINT = { de: '/mcp#chat', en: '/mcp#chat-en' } as const;

export function createMcpServer(deps: McpServerDeps, call: McpCall): Server {
  const server = new Server(
    { name: 'plauder', version: deps.version },
    { capabilities: { tools: {} }, instructions: SERVER_INSTRUCTIONS },
  );
  const handlers = toolHandlers(deps, call);
  // Stateless: a cancellation can only name a request of the same POST, whose answer the
  // JSON response then waits for in vain. A turn is cancelled by the client leaving.
  server.setNotificationHandler(CancelledNotificationSchema, () => {});
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...deps.tools] }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const name = request.params.name;
    // A plain error with a code: an McpError's message already carries the "MCP error"
    // prefix, which the client's McpError would add a second time.
    if (!isToolName(name)) {
      throw Object.assign(new Error(`Unknown tool: ${name}`), { code: ErrorCode.InvalidParams });
    }
    const args = request.params.arguments ?? {};
    try {
      return await handlers[name](args);
    } catch (error) {
      // Thrown errors would reach the client as their message; a database failure is
      // a technical error like any other, answered without internals.
      call.log.error({ error: safeError(error), code: 'internal_error' }, 'request failed');
      if (name === 'chat') call.recordChat('internal_error');
      return toolError('internal_error');
    }
  });

  return server;
}

type ToolHandler = (args: Record<string, unknown>) => Promise<CallToolResult>;

function toolHandlers(deps: McpServerDeps, call: McpCall): Record<ToolName, ToolHandler> {
  const { services, takeTurn } = deps;
  const { config } = services;
  return {
    async chat(args) {
      const language = readLanguage(args.language);
      if (language === undefined) {
        call.recordChat('language_invalid');
        return errorResult(
          'Refused',
          'language_invalid',
          'The argument "language" must be "de" (German) or "en" (English); leave it out for German.',
        );
      }
      const decision = await takeTurn({
        key: call.key,
        language,
        request: parseChatFields(args, config.messageMaxChars),
        idempotencyKey: call.idempotencyKey,
        fingerprint: { endpoint: FINGERPRINT_ENDPOINT[language], body: JSON.stringify(args) },
        signal: call.signal,
        handover: call.handover,
        handedOver: call.handedOver,
        onWait: call.onWait,
      });
      call.recordChat(decision.kind === 'soft_error' ? decision.code : decision.kind, decision);
      if (decision.kind === 'failed') {
        call.log.error({ error: safeError(decision.cause), code: decision.code }, 'request failed');
      }
      return turnResult(decision, config.messageMaxChars);
    },

    async usage() {
      const state = await services.quota.current(call.key, services.clock());
      const usage = keyUsage(call.key, state);
      return {
        content: [{ type: 'text', text: JSON.stringify(usage) }],
        structuredContent: { ...usage },
      };
    },

    async forget_session(args) {
      const sessionId = args.sessionId;
      if (typeof sessionId !== 'string' || !SESSION_ID_PATTERN.test(sessionId)) {
        return refused('session_id_invalid', 'Pass the sessionId that was given to `chat`.');
      }
      const deleted = await services.sessions.delete(call.key.id, sessionId, services.clock());
      const text = deleted
        ? `Forgot the session "${sessionId}": its stored turns are deleted.`
        : `There is no stored session "${sessionId}" for this API key: nothing to forget.`;
      return { content: [{ type: 'text', text }], structuredContent: { sessionId, deleted } };
    },
  };
}

function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

/** The reply language: German when absent; undefined when not one of the two. */
function readLanguage(value: unknown): Language | undefined {
  if (value === undefined || value === null) return 'de';
  return LANGUAGES.find((language) => language === value);
}
