/**
 * @module routes/admin/key-routes
 * `/admin/v1/keys`: list, create, read, change, rotate and revoke keys, the same
 * operations as `plauder keys ...`. The plaintext key appears only in the answers of
 * create and rotate; an audit line in the log names the operation and the key id.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { type KeyResult, keysWithUsage } from '../../keys/key-service.js';
import type { AppDeps, Services } from '../../services.js';
import { parseDuration } from '../../util/duration.js';
import { errorRef } from '../schemas.js';
import {
  adminSecurity,
  createdKeySchema,
  createKeyBody,
  keyIdParams,
  keyListSchema,
  keyViewSchema,
  rotatedKeySchema,
  rotateKeyBody,
  updateKeyBody,
} from './admin-schemas.js';
import { jsonBody } from './json-body.js';
import { type KeyView, keyView } from './key-views.js';

interface IdParams {
  id: string;
}
interface CreateBody {
  name: string;
  plan: string;
  active?: boolean;
}
interface UpdateBody {
  name?: string;
  plan?: string;
  active?: boolean;
}
interface RotateBody {
  grace?: string;
}

const tags = ['admin keys'];
/** A year: longer is no rotation, and the old secret's end must stay a valid date. */
const MAX_GRACE_MS = 365 * 86_400_000;
const refused = { 400: errorRef, 401: errorRef, 404: errorRef, 409: errorRef };

export async function adminKeyRoutes(app: FastifyInstance, { services }: AppDeps): Promise<void> {
  const { plans } = services.config;

  app.get(
    '/admin/v1/keys',
    {
      schema: {
        summary: "List keys with this month's usage",
        tags,
        security: adminSecurity,
        response: { 200: keyListSchema, 401: errorRef },
      },
    },
    async () => {
      const month = services.quota.monthOf(services.clock()).month;
      const keys = await keysWithUsage(services.keys, services.usage, month);
      return {
        month,
        timeZone: services.config.quotaTimeZone,
        keys: keys.map(({ key, used }) => keyView(key, plans, month, used)),
      };
    },
  );

  app.post<{ Body: CreateBody }>(
    '/admin/v1/keys',
    {
      schema: {
        summary: 'Create a key; the answer shows it once',
        tags,
        security: adminSecurity,
        body: createKeyBody(plans),
        response: { 201: createdKeySchema, 400: errorRef, 401: errorRef },
      },
      preValidation: jsonBody(),
    },
    async (request, reply) => {
      const { name, plan, active } = request.body;
      const issued = await settle(services, await services.keys.create({ name, plan, active }));
      audit(request, 'create', issued.id);
      reply.code(201);
      return { ...(await viewOf(services, issued.id)), key: issued.key };
    },
  );

  app.get<{ Params: IdParams }>(
    '/admin/v1/keys/:id',
    {
      schema: {
        summary: 'Read a key',
        tags,
        security: adminSecurity,
        params: keyIdParams,
        response: { 200: keyViewSchema, 401: errorRef, 404: errorRef },
      },
    },
    async (request) => viewOf(services, request.params.id),
  );

  app.patch<{ Params: IdParams; Body: UpdateBody }>(
    '/admin/v1/keys/:id',
    {
      schema: {
        summary: 'Change the name, the plan or whether the plan is active',
        tags,
        security: adminSecurity,
        params: keyIdParams,
        body: updateKeyBody(plans),
        response: { 200: keyViewSchema, ...refused },
      },
      preValidation: jsonBody(),
    },
    async (request) => {
      const { id } = request.params;
      await settle(services, await services.keys.update(id, request.body), id);
      audit(request, 'update', id);
      return viewOf(services, id);
    },
  );

  app.post<{ Params: IdParams; Body: RotateBody }>(
    '/admin/v1/keys/:id/rotate',
    {
      schema: {
        summary: 'Give the key a new secret; the answer shows it once',
        description:
          'Id, plan, usage and sessions stay with the key. With `grace` the old secret keeps working for that long.',
        tags,
        security: adminSecurity,
        params: keyIdParams,
        body: rotateKeyBody,
        response: { 200: rotatedKeySchema, ...refused },
      },
      preValidation: jsonBody({ optional: true }),
    },
    async (request) => {
      const { id } = request.params;
      const graceMs = parseDuration(request.body.grace ?? '0');
      if (graceMs === undefined || graceMs > MAX_GRACE_MS) throw new ApiError('grace_invalid');
      const now = services.clock();
      const issued = await settle(services, await services.keys.rotate(id, graceMs), id);
      audit(request, 'rotate', id);
      return {
        ...(await viewOf(services, id)),
        key: issued.key,
        previousKeyExpiresAt: new Date(now + graceMs).toISOString(),
      };
    },
  );

  app.post<{ Params: IdParams }>(
    '/admin/v1/keys/:id/revoke',
    {
      schema: {
        summary: 'Revoke a key: every secret of it is refused from the next request on',
        tags,
        security: adminSecurity,
        params: keyIdParams,
        response: { 200: keyViewSchema, ...refused },
      },
    },
    async (request) => {
      const { id } = request.params;
      await settle(services, await services.keys.revoke(id), id);
      audit(request, 'revoke', id);
      return viewOf(services, id);
    },
  );
}

async function viewOf(services: Services, id: string): Promise<KeyView> {
  const record = await services.keys.get(id);
  if (!record) throw new ApiError('key_not_found');
  const month = services.quota.monthOf(services.clock()).month;
  return keyView(record, services.config.plans, month, await services.usage.used(id, month));
}

/** The value of a key operation, or the ApiError its problem stands for. */
async function settle<T>(services: Services, result: KeyResult<T>, id?: string): Promise<T> {
  if (result.ok) return result.value;
  switch (result.problem) {
    case 'unknown_plan':
      throw new ApiError('plan_unknown');
    case 'invalid_name':
      throw new ApiError('name_invalid');
    case 'not_found': {
      // The service refuses changes to revoked keys as "not found"; the operator should
      // learn that the key exists but is revoked.
      const record = id === undefined ? undefined : await services.keys.get(id);
      const revoked = record !== undefined && record.revokedAt !== null;
      throw new ApiError(revoked ? 'key_revoked' : 'key_not_found');
    }
  }
}

function audit(request: FastifyRequest, operation: string, keyId: string): void {
  request.log.info({ admin: operation, keyId }, 'admin change');
}
