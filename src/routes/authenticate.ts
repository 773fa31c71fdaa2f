/**
 * @module routes/authenticate
 * Row 1 of the decision table, shared by every key-protected route.
 */
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import type { KeyAuthRecord } from '../keys/key-service.js';
import type { TokenBudget } from '../plans/plans.js';
import type { Services } from '../services.js';

export interface AuthenticatedKey extends KeyAuthRecord {
  /** The plan's monthly limit. */
  readonly limit: number;
  /** The plan's per-minute limit; undefined = none. */
  readonly minuteLimit: number | undefined;
  /** The plan's token budgets; undefined = none. */
  readonly tokens: TokenBudget | undefined;
}

const WWW_AUTHENTICATE = { 'www-authenticate': 'Bearer realm="plauder"' } as const;

/** Where a door finds the key: `Authorization: Bearer <key>` unless it says otherwise. */
export type AuthorizationOf = (request: FastifyRequest) => string | undefined;

const bearerHeader: AuthorizationOf = (request) => request.headers.authorization;

export async function authenticate(
  services: Services,
  request: FastifyRequest,
  authorizationOf: AuthorizationOf = bearerHeader,
): Promise<AuthenticatedKey> {
  const key = await services.keys.authenticate(authorizationOf(request));
  if (!key) throw new ApiError('invalid_api_key', WWW_AUTHENTICATE);
  request.keyId = key.id;
  const plan = services.config.plans.get(key.plan);
  // A key whose plan was removed from PLAUDER_PLANS is an operator error, not the client's.
  if (plan === undefined) throw new Error(`plan "${key.plan}" of key ${key.id} is not configured`);
  return {
    id: key.id,
    name: key.name,
    plan: key.plan,
    active: key.active,
    limit: plan.monthly,
    minuteLimit: plan.perMinute,
    tokens: plan.tokens,
  };
}

/**
 * Row 1 before anything else, also before Fastify reads the body (a bad key gets 401 whatever
 * its body or Content-Type): `hook` authenticates in `onRequest`, `keyOf` gives the handler
 * the key it found.
 */
export function authenticateBeforeBody(
  services: Services,
  authorizationOf: AuthorizationOf = bearerHeader,
) {
  const keys = new WeakMap<FastifyRequest, AuthenticatedKey>();
  return {
    hook: async (request: FastifyRequest): Promise<void> => {
      keys.set(request, await authenticate(services, request, authorizationOf));
    },
    keyOf: (request: FastifyRequest): AuthenticatedKey => {
      const key = keys.get(request);
      if (!key) throw new Error(`${request.url} reached its handler unauthenticated`);
      return key;
    },
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Public id of the authenticated key, for logs and metrics. */
    keyId?: string;
  }
}
