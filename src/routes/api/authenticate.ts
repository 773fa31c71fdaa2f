/**
 * @module routes/api/authenticate
 * Row 1 of the decision table, shared by every key-protected route.
 */
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import type { Services } from '../../services.js';
import type { KeyAuthRecord } from '../../storage/repositories/keys-repository.js';

export interface AuthenticatedKey extends KeyAuthRecord {
  readonly limit: number;
}

export const WWW_AUTHENTICATE = { 'www-authenticate': 'Bearer realm="plauder"' } as const;

export async function authenticate(
  services: Services,
  request: FastifyRequest,
): Promise<AuthenticatedKey> {
  const key = await services.keys.authenticate(request.headers.authorization);
  if (!key) throw new ApiError('invalid_api_key', WWW_AUTHENTICATE);
  request.keyId = key.id;
  const limit = services.config.plans.get(key.plan);
  // A key whose plan was removed from PLAUDER_PLANS is an operator error, not the client's.
  if (limit === undefined) throw new Error(`plan "${key.plan}" of key ${key.id} is not configured`);
  return { ...key, limit };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Public id of the authenticated key, for logs and metrics. */
    keyId?: string;
  }
}
