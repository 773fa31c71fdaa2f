/**
 * @module routes/ops/root-route
 * `GET /`: a pointer for whoever opens the service's address, to the API documentation,
 * the OpenAPI document and (when enabled) the admin console.
 */
import type { FastifyInstance } from 'fastify';
import { VERSION } from '../../version.js';

const rootSchema = {
  type: 'object',
  required: ['name', 'version', 'docs', 'openapi', 'console'],
  properties: {
    name: { type: 'string' },
    version: { type: 'string' },
    docs: { type: 'string', description: 'The API documentation (Swagger UI).' },
    openapi: { type: 'string', description: 'The OpenAPI 3.1 document.' },
    console: {
      type: ['string', 'null'],
      description: 'The admin console, or null when PLAUDER_ADMIN_TOKEN is not set.',
    },
  },
  example: {
    name: 'plauder',
    version: VERSION,
    docs: '/docs',
    openapi: '/openapi.json',
    console: '/admin/',
  },
} as const;

export async function rootRoute(
  app: FastifyInstance,
  { consoleEnabled }: { consoleEnabled: boolean },
): Promise<void> {
  const body = {
    name: 'plauder',
    version: VERSION,
    docs: '/docs',
    openapi: '/openapi.json',
    console: consoleEnabled ? '/admin/' : null,
  };
  app.get(
    '/',
    {
      schema: {
        summary: 'Where to start: the API documentation, the OpenAPI document, the console',
        tags: ['ops'],
        response: { 200: rootSchema },
      },
    },
    async () => body,
  );
}
