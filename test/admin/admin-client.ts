/**
 * Shared by the admin tests: a server with the admin API enabled and a client for it.
 */
import { createHash } from 'node:crypto';
import { type HttpResult, http, startTestServer, type TestServer } from '../helpers/test-server.js';

export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789abcdef';

export function startAdminServer(
  options: { clock?: () => number; env?: Record<string, string> } = {},
): Promise<TestServer> {
  return startTestServer({
    ...(options.clock ? { clock: options.clock } : {}),
    env: { PLAUDER_CORE: 'placeholder', PLAUDER_ADMIN_TOKEN: ADMIN_TOKEN, ...options.env },
  });
}

export interface AdminRequest {
  method?: string;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  token?: string;
}

/** Calls `/admin/v1/<path>` with the admin token (or `token`). */
export function admin(
  server: { url: string },
  path: string,
  { token = ADMIN_TOKEN, ...init }: AdminRequest = {},
): Promise<HttpResult> {
  return http(`${server.url}/admin/v1/${path}`, { ...init, key: token });
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
