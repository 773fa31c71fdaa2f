/**
 * @module routes/admin/key-routes
 * `/admin/v1/keys`: list, create, read, change, rotate and revoke keys, the same
 * operations as `plauder keys ...`. The plaintext key appears only in the answers of
 * create and rotate; an audit line in the log names the operation and the key id.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import type { ErrorCode } from '../../errors/error-codes.js';
import {
  createKey,
  type KeyOutcome,
  type KeyProblem,
  listKeys,
  revokeKey,
  rotateKey,
  updateKey,
  viewKey,
} from '../../operations/key-operations.js';
import type { KeyView } from '../../operations/key-view.js';
import type { ListQuery } from '../../operations/list-query.js';
import type { AppDeps, Services } from '../../services.js';
import { errorResponses } from '../responses.js';
import {
  adminSecurity,
  createdKeySchema,
  createKeyBody,
  keyIdParams,
  keyListQuery,
  keyListSchema,
  keyViewSchema,
  rotatedKeySchema,
  rotateKeyBody,
  updateKeyBody,
} from './admin-schemas.js';
import { jsonBody, knownQuery, LIST_REFUSED } from './json-body.js';

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
/** What every admin key route can refuse with: the token, an unknown key, a revoked key. */
const REFUSED = ['admin_unauthorized', 'key_not_found', 'key_revoked'] as const;
const BODY_REFUSED = ['json_invalid', 'fields_invalid', 'payload_too_large'] as const;

export async function adminKeyRoutes(app: FastifyInstance, { services }: AppDeps): Promise<void> {
  const { plans } = services.config;

  app.get<{ Querystring: ListQuery }>(
    '/admin/v1/keys',
    {
      schema: {
        summary: "List keys with this month's usage",
        tags,
        security: adminSecurity,
        description:
          'One page of the keys, oldest first unless `sort` says otherwise; `page.nextCursor` fetches the next. `q`, `plan` and `active` narrow the list, `page.total` counts all matching keys.',
        querystring: keyListQuery,
        response: {
          200: keyListSchema,
          ...errorResponses([...LIST_REFUSED, 'admin_unauthorized']),
        },
      },
      preValidation: knownQuery(),
    },
    async (request) => {
      const listed = await listKeys(services, request.query);
      if (!listed.ok) throw new ApiError('cursor_invalid');
      return { ...listed.value, timeZone: services.config.quotaTimeZone };
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
        response: {
          201: createdKeySchema,
          ...errorResponses([
            ...BODY_REFUSED,
            'name_invalid',
            'plan_unknown',
            'admin_unauthorized',
          ]),
        },
      },
      preValidation: jsonBody(),
    },
    async (request, reply) => {
      const { name, plan, active } = request.body;
      const issued = answer(await createKey(services, { name, plan, active }));
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
        response: {
          200: keyViewSchema,
          ...errorResponses(['admin_unauthorized', 'key_not_found']),
        },
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
        response: {
          200: keyViewSchema,
          ...errorResponses([...BODY_REFUSED, 'name_invalid', 'plan_unknown', ...REFUSED]),
        },
      },
      preValidation: jsonBody(),
    },
    async (request) => {
      const { id } = request.params;
      answer(await updateKey(services, id, request.body));
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
        response: {
          200: rotatedKeySchema,
          ...errorResponses([...BODY_REFUSED, 'grace_invalid', ...REFUSED]),
        },
      },
      preValidation: jsonBody({ optional: true }),
    },
    async (request) => {
      const { id } = request.params;
      const issued = answer(await rotateKey(services, id, request.body.grace));
      audit(request, 'rotate', id);
      return {
        ...(await viewOf(services, id)),
        key: issued.key,
        previousKeyExpiresAt: issued.previousKeyExpiresAt,
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
        // No body, and an id that is no key id is simply not found: never 400.
        response: { 200: keyViewSchema, ...errorResponses(REFUSED) },
      },
    },
    async (request) => {
      const { id } = request.params;
      answer(await revokeKey(services, id));
      audit(request, 'revoke', id);
      return viewOf(services, id);
    },
  );
}

async function viewOf(services: Services, id: string): Promise<KeyView> {
  return answer(await viewKey(services, id));
}

const PROBLEM_CODES: Readonly<Record<KeyProblem, ErrorCode>> = {
  not_found: 'key_not_found',
  revoked: 'key_revoked',
  unknown_plan: 'plan_unknown',
  invalid_name: 'name_invalid',
  invalid_grace: 'grace_invalid',
};

/** The value of a key operation, or the ApiError its problem stands for. */
function answer<T>(outcome: KeyOutcome<T>): T {
  if (outcome.ok) return outcome.value;
  throw new ApiError(PROBLEM_CODES[outcome.problem]);
}

function audit(request: FastifyRequest, operation: string, keyId: string): void {
  request.log.info({ admin: operation, keyId }, 'admin change');
}
