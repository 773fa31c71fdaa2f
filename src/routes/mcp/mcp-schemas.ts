/**
 * @module routes/mcp/mcp-schemas
 * JSON-RPC 2.0 messages of `POST /mcp`, for the OpenAPI document. The MCP transport
 * validates the messages itself; the tools and their arguments are described by
 * `tools/list` (mcp-tools.ts), where MCP clients look for them.
 */

const jsonRpcId = { type: ['string', 'integer'], description: 'Chosen by the client.' } as const;

const mcpMessage = {
  type: 'object',
  required: ['jsonrpc', 'method'],
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: jsonRpcId,
    method: {
      type: 'string',
      description: '`initialize`, `notifications/initialized`, `tools/list`, `tools/call`, `ping`.',
    },
    params: { type: 'object' },
  },
} as const;

export const mcpMessageSchema = {
  description:
    'A JSON-RPC 2.0 request or notification of MCP, e.g. ' +
    '`{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "chat", ' +
    '"arguments": {"message": "Hello", "language": "en", "sessionId": "demo-1"}}}`, or an array of them.',
  oneOf: [mcpMessage, { type: 'array', minItems: 1, items: mcpMessage }],
} as const;

const mcpResponseSchema = {
  type: 'object',
  description:
    'A JSON-RPC 2.0 response: `result` (for `tools/call`: `{"content": [{"type": "text", ' +
    '"text": ...}], "isError"?: true, "structuredContent"?: {...}}`) or `error` ' +
    '(`{"code", "message"}`), or an array of them for a batch.',
  required: ['jsonrpc'],
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: {
      ...jsonRpcId,
      type: ['string', 'integer', 'null'],
      description: "The request's id; null when the message could not be read.",
    },
    result: { type: 'object' },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'integer' }, message: { type: 'string' } },
    },
  },
} as const;

/** A JSON-RPC answer, with the example the document shows for its status. */
const answer = (example: object) => ({ ...mcpResponseSchema, examples: [example] });

const jsonRpcError = (code: number, message: string) =>
  answer({ jsonrpc: '2.0', id: null, error: { code, message } });

/** The JSON-RPC answers of `POST /mcp`: a result, or the transport's refusals of a message. */
export const mcpAnswers = {
  200: answer({
    jsonrpc: '2.0',
    id: 1,
    result: { content: [{ type: 'text', text: 'Hello! How can I help?' }] },
  }),
  400: jsonRpcError(-32700, 'Parse error: Invalid JSON-RPC message'),
  406: jsonRpcError(
    -32000,
    'Not Acceptable: Client must accept both application/json and text/event-stream',
  ),
  415: jsonRpcError(-32000, 'Unsupported Media Type: Content-Type must be application/json'),
};

/** The optional `Idempotency-Key` of the POST that carries a `tools/call` of `chat`. */
export const mcpIdempotencyKeyHeader = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      minLength: 1,
      maxLength: 257,
      description:
        'Makes a retried `chat` call safe: 1-255 printable ASCII characters, bare or as a ' +
        'quoted string. A repeat of the same call (same arguments) with the same key within ' +
        'PLAUDER_IDEMPOTENCY_TTL (24 h) gets the first reply again, with ' +
        '`Idempotent-Replayed: true`, and is not counted; other arguments, or a repeat while ' +
        'the first still runs, get an error result (`idempotency_key_reused`, ' +
        '`idempotency_key_in_flight`). Other methods and tools ignore it.',
    },
  },
} as const;
