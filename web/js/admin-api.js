/**
 * @module admin-api
 * The admin HTTP API as functions. URLs are relative to the console (`/admin/`), so the
 * console also works behind a reverse proxy that mounts the service under a path.
 */

export class ApiProblem extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = 'ApiProblem';
    this.status = status;
    this.code = code;
  }
}

export function createAdminApi(getToken, onUnauthorized) {
  async function call(method, path, body) {
    /** @type {Record<string, string>} */
    const headers = { authorization: `Bearer ${getToken()}` };
    /** @type {RequestInit} */
    const init = { method, headers, cache: 'no-store' };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(new URL(`v1/${path}`, document.baseURI), init);
    } catch {
      throw new ApiProblem(0, 'network', 'network');
    }
    const data = await response.json().catch(() => undefined);
    if (response.ok) return data;
    const problem = new ApiProblem(
      response.status,
      data?.error?.code ?? 'unknown',
      data?.error?.message ?? `HTTP ${response.status}`,
    );
    if (response.status === 401) onUnauthorized?.(problem);
    throw problem;
  }

  const keyPath = (id, rest = '') => `keys/${encodeURIComponent(id)}${rest}`;
  return {
    plans: () => call('GET', 'plans'),
    /** One page of keys; `params`: limit, cursor, q, plan, active, sort (docs/admin.md). */
    listKeys: (params = {}) => call('GET', `keys?${new URLSearchParams(params)}`),
    /** The month's usage report for the same filters (its `total`: all matching keys). */
    usage: (params = {}) => call('GET', `usage?${new URLSearchParams(params)}`),
    createKey: (input) => call('POST', 'keys', input),
    updateKey: (id, patch) => call('PATCH', keyPath(id), patch),
    rotateKey: (id, grace) => call('POST', keyPath(id, '/rotate'), { grace }),
    revokeKey: (id) => call('POST', keyPath(id, '/revoke')),
    keyHistory: (id) => call('GET', keyPath(id, '/usage')),
    events: () => call('GET', 'events?limit=20'),
  };
}
