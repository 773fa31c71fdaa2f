/**
 * @module errors/error-codes
 * The closed list of error codes a client can see, and the one place that maps a code
 * to its HTTP status and its English message. Soft errors answer 200 with a `reply`.
 */

export const ERROR_CODES = [
  'invalid_api_key',
  'idempotency_key_invalid',
  'idempotency_key_in_flight',
  'idempotency_key_reused',
  'plan_inactive',
  'quota_exceeded',
  'rate_limited',
  'token_budget_exceeded',
  'too_many_concurrent',
  'body_invalid',
  'message_missing',
  'message_invalid',
  'message_too_long',
  'session_id_invalid',
  'internal_error',
  'core_unavailable',
  'core_timeout',
  'payload_too_large',
  'request_timeout',
  'bad_request',
  'not_found',
  'method_not_allowed',
  'session_not_found',
  'service_unavailable',
  'admin_unauthorized',
  'json_invalid',
  'fields_invalid',
  'name_invalid',
  'plan_unknown',
  'month_invalid',
  'grace_invalid',
  'key_not_found',
  'key_revoked',
  'limit_invalid',
  'cursor_invalid',
  'sort_invalid',
  'active_invalid',
  'search_invalid',
  'query_unknown',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export type SoftErrorCode = Extract<
  ErrorCode,
  | 'plan_inactive'
  | 'body_invalid'
  | 'message_missing'
  | 'message_invalid'
  | 'message_too_long'
  | 'session_id_invalid'
>;

export function statusOf(code: ErrorCode): number {
  switch (code) {
    case 'plan_inactive':
    case 'body_invalid':
    case 'message_missing':
    case 'message_invalid':
    case 'message_too_long':
    case 'session_id_invalid':
      return 200;
    case 'bad_request':
    case 'json_invalid':
    case 'fields_invalid':
    case 'name_invalid':
    case 'plan_unknown':
    case 'month_invalid':
    case 'grace_invalid':
    case 'limit_invalid':
    case 'cursor_invalid':
    case 'sort_invalid':
    case 'active_invalid':
    case 'search_invalid':
    case 'query_unknown':
    case 'idempotency_key_invalid':
      return 400;
    case 'invalid_api_key':
    case 'admin_unauthorized':
      return 401;
    case 'not_found':
    case 'session_not_found':
    case 'key_not_found':
      return 404;
    case 'method_not_allowed':
      return 405;
    case 'request_timeout':
      return 408;
    case 'key_revoked':
    case 'idempotency_key_in_flight':
      return 409;
    case 'payload_too_large':
      return 413;
    case 'idempotency_key_reused':
      return 422;
    case 'quota_exceeded':
    case 'rate_limited':
    case 'token_budget_exceeded':
    case 'too_many_concurrent':
      return 429;
    case 'internal_error':
    case 'core_unavailable':
    case 'core_timeout':
      return 500;
    case 'service_unavailable':
      return 503;
  }
}

/** The codes of soft errors: answered 200 with a friendly `reply` (a front door may map them). */
export const SOFT_ERROR_CODES = ERROR_CODES.filter(
  (code): code is SoftErrorCode => statusOf(code) === 200,
);

/** English, for developers reading `error.message`; never contains request data. */
export const ERROR_MESSAGES: Readonly<Record<ErrorCode, string>> = {
  invalid_api_key: 'The API key is missing, malformed, unknown or no longer valid.',
  idempotency_key_invalid:
    'The Idempotency-Key header must be 1-255 printable ASCII characters, bare or as a quoted string.',
  idempotency_key_in_flight:
    'A request with this Idempotency-Key is still running. Retry after it has finished.',
  idempotency_key_reused:
    'This Idempotency-Key was already used with another endpoint or another request body.',
  plan_inactive: 'The plan of this API key is inactive.',
  quota_exceeded: 'The monthly request limit of this API key is reached.',
  rate_limited:
    'The per-minute request limit of this API key is reached. Retry after the Retry-After seconds.',
  token_budget_exceeded:
    "The answer's worst case (the input and its output cap) does not fit in the token budget left to this API key. Retry after the Retry-After seconds, or ask for fewer output tokens.",
  too_many_concurrent:
    'This API key already has its maximum of requests running at once. Retry after one has finished.',
  body_invalid: 'The request body must be a JSON object sent as application/json.',
  message_missing: 'The field "message" is missing or empty.',
  message_invalid: 'The field "message" must be a string.',
  message_too_long: 'The field "message" is longer than the allowed number of characters.',
  session_id_invalid: 'The field "sessionId" must be 1-128 characters of A-Z a-z 0-9 . _ : @ -.',
  internal_error: 'A technical error occurred. Please try again later.',
  core_unavailable: 'The conversational core is unavailable. Please try again later.',
  core_timeout: 'The conversational core did not answer in time. Please try again later.',
  payload_too_large: 'The request body is larger than allowed.',
  request_timeout: 'The request was not received completely in time.',
  bad_request: 'The request could not be understood.',
  not_found: 'No such route.',
  method_not_allowed: 'This method is not allowed on this route.',
  session_not_found: 'No stored session with this id for this API key.',
  service_unavailable: 'The service is not ready.',
  admin_unauthorized: 'The admin token is missing or wrong.',
  json_invalid: 'The request body must be a JSON object sent as application/json.',
  fields_invalid:
    'The request body has an unknown field, misses a required field or has a field of the wrong type.',
  name_invalid: 'The field "name" must be 1-100 printable characters.',
  plan_unknown: 'No plan with this name is configured.',
  month_invalid: 'The query parameter "month" must be a month such as 2026-11 (YYYY-MM).',
  grace_invalid: 'The field "grace" must be a duration from 0 to 365d, such as 30m, 24h or 7d.',
  key_not_found: 'No key with this id.',
  key_revoked: 'The key is revoked and can no longer be changed.',
  limit_invalid: 'The query parameter "limit" must be a whole number from 1 to 500.',
  cursor_invalid:
    'The query parameter "cursor" must be a "nextCursor" of an earlier answer with the same "sort".',
  sort_invalid: 'The query parameter "sort" must be one of created, -created, name, -name.',
  active_invalid: 'The query parameter "active" must be true or false.',
  search_invalid: 'The query parameters "q" and "plan" must be at most 100 characters.',
  query_unknown:
    'The query has a parameter this route does not know; lists take limit, cursor, q, plan, active and sort.',
};
