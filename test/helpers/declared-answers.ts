/**
 * Whether every error a server answered is one its route declares: each request log line
 * (route, method, status, outcome) is looked up in the server's `/openapi.json`, which is
 * generated from the routes' declarations (src/routes/responses.ts).
 */
import { expect } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../../src/errors/error-codes.js';
import { http, type TestServer } from './test-server.js';

type Json = Record<string, any>;

const isErrorCode = (value: unknown): value is ErrorCode =>
  ERROR_CODES.some((code) => code === value);

/** The codes a status of an operation can carry, when it answers in plauder's envelope. */
function declaredCodes(response: Json): string[] | undefined {
  const parts: Json[] = response.content?.['application/json']?.schema?.allOf ?? [];
  if (parts[0]?.$ref !== '#/components/schemas/ErrorBody') return undefined;
  return parts[1]?.properties?.error?.properties?.code?.enum;
}

/**
 * The answers in `logs` that their route does not declare: a status its operation lacks,
 * or an error code of plauder's envelope missing from that status's codes (under /v1 the
 * logged outcome is not always the code answered, e.g. `model_not_found`; the answers
 * there are checked against the document by test/ops/openapi-truth.test.ts). Unknown
 * paths and pages the document leaves out (/docs, the console) are not routes of the API.
 */
export function undeclaredAnswers(document: Json, logs: readonly string[]): string[] {
  const found = new Set<string>();
  for (const text of logs) {
    const line = JSON.parse(text) as Json;
    if (line.msg !== 'request' || line.status < 400 || line.status === 499) continue;
    const path = String(line.route).replace(/:(\w+)/g, '{$1}');
    const method = line.method === 'HEAD' ? 'get' : String(line.method).toLowerCase();
    const operation = document.paths[path]?.[method];
    if (operation === undefined) continue;
    const where = `${line.method} ${path} ${line.status}`;
    const response = operation.responses[line.status];
    if (response === undefined) {
      found.add(`${where} (${line.outcome ?? 'no code'}): status not declared`);
      continue;
    }
    const codes = declaredCodes(response);
    const code: unknown = line.outcome;
    // A chat outcome that is no error code (`failed`) says nothing of the code answered.
    if (codes === undefined || !isErrorCode(code)) continue;
    if (!codes.includes(code)) found.add(`${where}: ${code} not declared`);
  }
  return [...found].sort();
}

/** Every error `server` answered so far is declared by its route. */
export async function expectDeclaredAnswers(server: TestServer): Promise<void> {
  const document = (await http(`${server.url}/openapi.json`)).json;
  expect(undeclaredAnswers(document, server.logs)).toEqual([]);
}
