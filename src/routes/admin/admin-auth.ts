/**
 * @module routes/admin/admin-auth
 * The admin API's bearer token check. Both sides are hashed first, so the comparison
 * takes the same time whatever the length of the token sent or where it differs.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { onRequestHookHandler } from 'fastify';
import { ApiError } from '../../errors/api-error.js';

const ADMIN_WWW_AUTHENTICATE = {
  'www-authenticate': 'Bearer realm="plauder admin"',
} as const;

const BEARER = /^Bearer +(\S+) *$/i;

/** Built once with the configured token; refuses every request without it (401). */
export function adminAuth(token: string): onRequestHookHandler {
  const expected = sha256(token);
  return async (request) => {
    const match = BEARER.exec(request.headers.authorization ?? '');
    const given = sha256(match?.[1] ?? '');
    if (!timingSafeEqual(given, expected) || match === null) {
      throw new ApiError('admin_unauthorized', ADMIN_WWW_AUTHENTICATE);
    }
  };
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
