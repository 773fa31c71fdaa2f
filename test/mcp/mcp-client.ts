/**
 * The official MCP SDK client, connected to a test server's `/mcp` with a bearer key:
 * what an agent's MCP client does, unchanged.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';

export async function connectMcp(
  server: { url: string },
  key: string,
  headers: Record<string, string> = {},
): Promise<Client> {
  const client = new Client({ name: 'plauder-test-agent', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } },
  });
  await client.connect(transport);
  return client;
}

export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The text of a result's single text block. */
export function textOf(result: CallToolResult): string {
  expect(result.content).toHaveLength(1);
  const [block] = result.content;
  if (block?.type !== 'text')
    throw new Error(`expected one text block, got ${JSON.stringify(result.content)}`);
  return block.text;
}
