/**
 * The routes an app really serves and the routes its OpenAPI document lists, as
 * "METHOD /path/{param}", for the tests that keep the two in step.
 */
import type { FastifyInstance } from 'fastify';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** From Fastify's route tree (`printRoutes`), which nests shared prefixes by depth. */
export function servedRoutes(app: FastifyInstance): string[] {
  const routes: string[] = [];
  const prefixes: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:│ {3}| {4})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    const path = (prefixes[depth - 1] ?? '') + (match[2] ?? '');
    prefixes[depth] = path;
    prefixes.length = depth + 1;
    for (const method of (match[3] ?? '').split(',').map((m) => m.trim())) {
      if (method) routes.push(`${method} ${path.replace(/:(\w+)/g, '{$1}')}`);
    }
  }
  return routes.sort();
}

export function documentedRoutes(doc: {
  paths: Record<string, Record<string, unknown>>;
}): string[] {
  const routes: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of Object.keys(item)) {
      if (HTTP_METHODS.includes(method)) routes.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return routes.sort();
}
