/**
 * @module routes/mcp/mcp-tools
 * What an agent sees of plauder over MCP (docs/contract.md, "MCP"): the tools' names, descriptions
 * and JSON Schemas. They are written for a model reading them cold, with no other
 * documentation: what each tool does, what it costs, what the arguments look like and
 * what comes back. The limits in them come from the running configuration.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../../config/config.js';
import { SESSION_ID_PATTERN } from '../../sessions/session-service.js';

export const TOOL_NAMES = ['chat', 'usage', 'forget_session'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export const LANGUAGES = ['de', 'en'] as const;

/** The server's own introduction, sent with `initialize`. */
export const SERVER_INSTRUCTIONS =
  'plauder is a conversational assistant behind an API key with a monthly request quota. ' +
  'Use `chat` to ask it something (German by default, English with language "en"); pass ' +
  'the same sessionId on every call of one conversation so it remembers earlier turns. ' +
  'Only successful `chat` calls count against the quota; `usage` shows what is left and ' +
  '`forget_session` erases a conversation. Both are free.';

const sessionIdProperty = {
  type: 'string',
  pattern: SESSION_ID_PATTERN.source,
  minLength: 1,
  maxLength: 128,
} as const;

export function toolDefinitions(config: Pick<Config, 'messageMaxChars'>): Tool[] {
  return [
    {
      name: 'chat',
      title: 'Chat with plauder',
      description:
        "Sends one message to plauder's conversational assistant and returns its reply as " +
        'text. Each successful call counts as one request against the monthly quota of this ' +
        'API key; refused calls (bad arguments, inactive plan, quota used up) and technical ' +
        'failures do not count and come back as an error result that says why. ' +
        'For a conversation with memory, pass the same `sessionId` on every call: the ' +
        'assistant then sees the earlier turns (for example a name the user gave, or the ' +
        'topic of a follow-up question). Without `sessionId` each call stands alone and ' +
        'nothing is stored.',
      inputSchema: {
        type: 'object',
        properties: {
          message: {
            type: 'string',
            minLength: 1,
            maxLength: config.messageMaxChars,
            description: `What the user says or asks, as plain text: not empty, at most ${config.messageMaxChars} characters.`,
          },
          language: {
            type: 'string',
            enum: [...LANGUAGES],
            default: 'de',
            description:
              'Language of the reply: "de" for German (the default) or "en" for English. ' +
              'One session may switch between them.',
          },
          sessionId: {
            ...sessionIdProperty,
            description:
              'Optional id of the conversation, chosen by you: 1-128 characters of A-Z, a-z, ' +
              '0-9 and . _ : @ - (for example "support-4711"). Reuse it to continue a ' +
              'conversation, use a new one to start afresh. Sessions are private to this API ' +
              'key and forgotten after a period without use.',
          },
        },
        required: ['message'],
      },
      annotations: {
        title: 'Chat with plauder',
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    {
      name: 'usage',
      title: 'Quota of this API key',
      description:
        "Returns this API key's plan and this month's request count as JSON: " +
        '{"plan", "active", "limit", "used", "remaining", "resetsAt"}. `remaining` is how ' +
        'many more successful `chat` calls the key has this month; `resetsAt` (ISO 8601) is ' +
        'when the count starts again from zero; `active: false` means the operator has ' +
        'paused the plan and `chat` is refused. Takes no arguments; does not count against ' +
        'the quota.',
      inputSchema: { type: 'object', properties: {} },
      outputSchema: {
        type: 'object',
        properties: {
          plan: { type: 'string', description: 'Name of the plan, e.g. "standard".' },
          active: { type: 'boolean', description: 'False when the plan is paused.' },
          limit: { type: 'integer', description: 'Successful chat calls allowed per month.' },
          used: { type: 'integer', description: 'Successful chat calls this month.' },
          remaining: { type: 'integer', description: 'limit - used, at least 0.' },
          resetsAt: {
            type: 'string',
            format: 'date-time',
            description: 'When the month ends and the count restarts at 0.',
          },
        },
        required: ['plan', 'active', 'limit', 'used', 'remaining', 'resetsAt'],
      },
      annotations: {
        title: 'Quota of this API key',
        readOnlyHint: true,
        openWorldHint: false,
      },
    },
    {
      name: 'forget_session',
      title: 'Forget a conversation',
      description:
        'Deletes the stored memory of one conversation of this API key (every turn stored ' +
        'under that `sessionId`) for good: a later `chat` with the same `sessionId` starts ' +
        'afresh. Only sessions of this API key can be reached. Forgetting a session that ' +
        'does not exist, or no longer exists, is not an error: the result says ' +
        '`"deleted": false`. Does not count against the quota.',
      inputSchema: {
        type: 'object',
        properties: {
          sessionId: {
            ...sessionIdProperty,
            description: 'The `sessionId` that was passed to `chat` for this conversation.',
          },
        },
        required: ['sessionId'],
      },
      outputSchema: {
        type: 'object',
        properties: {
          sessionId: { type: 'string' },
          deleted: {
            type: 'boolean',
            description: 'True when a stored session was deleted, false when there was none.',
          },
        },
        required: ['sessionId', 'deleted'],
      },
      annotations: {
        title: 'Forget a conversation',
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
  ];
}
