/**
 * @module routes/ops/docs-routes
 * API documentation at `/docs`: Swagger UI rendering `/openapi.json`'s document. Its
 * scripts, styles and images are served by this service (from `@fastify/swagger-ui`'s
 * package), so the page works offline and loads nothing from other origins.
 */
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/** Swagger UI injects a `<style>` (blocked without 'unsafe-inline') and shows its logo as a data: image. */
const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export async function docsRoutes(app: FastifyInstance): Promise<void> {
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: DOCS_CSP,
    // No `validatorUrl`: its default (none) keeps the document from being sent to validator.swagger.io.
    uiConfig: { deepLinking: true, tryItOutEnabled: false },
    theme: { title: 'plauder API' },
  });
}
