/**
 * @module routes/admin
 * The operators' console: the admin HTTP API under `/admin/v1` and the web console at
 * `/admin/`. `app.ts` registers this only when `PLAUDER_ADMIN_TOKEN` is set; otherwise
 * every `/admin` path is an unknown route (404).
 */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../services.js';
import { judgeContentTypeLater } from '../request-body.js';
import { adminAuth } from './admin-auth.js';
import { consoleRoutes, loadConsoleFiles } from './console-routes.js';
import { adminEventRoutes } from './event-routes.js';
import { schemaErrorToApiError } from './json-body.js';
import { adminKeyRoutes } from './key-routes.js';
import { adminPlanRoutes } from './plan-routes.js';
import { adminUsageRoutes } from './usage-routes.js';

export interface AdminOptions extends AppDeps {
  readonly adminToken: string;
}

export async function adminRoutes(app: FastifyInstance, options: AdminOptions): Promise<void> {
  const { adminToken, ...deps } = options;

  await app.register(async (api) => {
    // The token is checked before the body is read: a stranger learns nothing about input rules.
    api.addHook('onRequest', adminAuth(adminToken));
    api.addHook('onRequest', judgeContentTypeLater);
    api.setSchemaErrorFormatter(schemaErrorToApiError);
    await api.register(adminKeyRoutes, deps);
    await api.register(adminUsageRoutes, deps);
    await api.register(adminPlanRoutes, deps);
    await api.register(adminEventRoutes, deps);
  });

  // The console's files hold no secrets; its data comes from the API above, with the token.
  await app.register(consoleRoutes, { files: loadConsoleFiles() });
}
