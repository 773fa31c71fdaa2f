/**
 * Bad input to the admin API: each case gets a 400 / 404 envelope with a code that says
 * what was wrong, and changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectDeclaredAnswers } from '../helpers/declared-answers.js';
import { chat, type HttpResult, http, type TestServer } from '../helpers/test-server.js';
import { ADMIN_TOKEN, admin, startAdminServer } from './admin-client.js';

let server: TestServer;
let keyId: string;
let apiKey: string;
let before: unknown;

beforeAll(async () => {
  server = await startAdminServer();
  const created = await admin(server, 'keys', { body: { name: 'stable', plan: 'standard' } });
  keyId = created.json.id;
  apiKey = created.json.key;
  before = (await admin(server, 'keys')).json;
});
afterAll(() => server.close());

function expectRefused(res: HttpResult, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.json).toEqual({
    error: { code, message: expect.any(String), requestId: res.headers.get('x-request-id') },
  });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
}

async function expectNothingChanged(): Promise<void> {
  expect((await admin(server, 'keys')).json).toEqual(before);
  expect((await chat(server, apiKey, { message: 'still works?' })).status).toBe(200);
  before = (await admin(server, 'keys')).json; // the chat request above counted
}

/** A request with the admin token and a raw body. */
const raw = (
  method: string,
  path: string,
  body: string | Buffer | undefined,
  contentType?: string,
) =>
  http(`${server.url}/admin/v1/${path}`, {
    method,
    key: ADMIN_TOKEN,
    ...(body === undefined ? {} : { raw: body }),
    headers: contentType ? { 'content-type': contentType } : {},
  });

const notJson: ReadonlyArray<[string, string | Buffer | undefined, string | undefined]> = [
  ['malformed JSON', '{"name": "x", "plan":', 'application/json'],
  ['an array', '[{"name": "x", "plan": "standard"}]', 'application/json'],
  ['a JSON string', '"standard"', 'application/json'],
  ['JSON null', 'null', 'application/json'],
  ['an empty body', '', 'application/json'],
  ['no body at all', undefined, undefined],
  ['text/plain', '{"name": "x", "plan": "standard"}', 'text/plain'],
  ['a malformed content type', '{"name": "x", "plan": "standard"}', 'json'],
  ['form data', 'name=x&plan=standard', 'application/x-www-form-urlencoded'],
  [
    'a __proto__ key',
    '{"name": "x", "plan": "standard", "__proto__": {"a": 1}}',
    'application/json',
  ],
  [
    'a constructor.prototype key',
    '{"name": "x", "plan": "standard", "constructor": {"prototype": {"a": 1}}}',
    'application/json',
  ],
  [
    'invalid UTF-8',
    Buffer.concat([Buffer.from('{"name": "'), Buffer.from([0xff]), Buffer.from('"}')]),
    'application/json; charset=utf-8',
  ],
];

describe('bodies that are not a JSON object sent as application/json', () => {
  it.each(notJson)('POST /admin/v1/keys with %s → 400 json_invalid', async (_, body, type) => {
    const res = await raw('POST', 'keys', body, type);
    expectRefused(res, 400, 'json_invalid');
    await expectNothingChanged();
  });

  it.each(notJson.filter(([, body]) => body !== undefined && body.length > 0))(
    'PATCH /admin/v1/keys/{id} with %s → 400 json_invalid',
    async (_, body, type) => {
      expectRefused(await raw('PATCH', `keys/${keyId}`, body, type), 400, 'json_invalid');
      await expectNothingChanged();
    },
  );

  it('POST rotate with a body that is not JSON → 400 json_invalid, the key keeps its secret', async () => {
    expectRefused(
      await raw('POST', `keys/${keyId}/rotate`, '{"grace":"1h"}', 'text/plain'),
      400,
      'json_invalid',
    );
    expectRefused(
      await raw('POST', `keys/${keyId}/rotate`, 'grace=1h', 'application/json'),
      400,
      'json_invalid',
    );
    await expectNothingChanged();
  });

  it('answers 413 payload_too_large for a body over the limit', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(70_000), plan: 'standard' });
    expectRefused(await raw('POST', 'keys', big, 'application/json'), 413, 'payload_too_large');
    await expectNothingChanged();
  });
});

describe('creating a key with bad fields', () => {
  const cases: ReadonlyArray<[string, unknown, string]> = [
    ['an unknown plan', { name: 'x', plan: 'gold' }, 'plan_unknown'],
    ['a plan in the wrong case', { name: 'x', plan: 'Standard' }, 'plan_unknown'],
    ['no name', { plan: 'standard' }, 'fields_invalid'],
    ['no plan', { name: 'x' }, 'fields_invalid'],
    ['an empty name', { name: '', plan: 'standard' }, 'name_invalid'],
    ['a blank name', { name: '   ', plan: 'standard' }, 'name_invalid'],
    ['a name with a control character', { name: 'a\u0007b', plan: 'standard' }, 'name_invalid'],
    ['a name of 101 characters', { name: 'n'.repeat(101), plan: 'standard' }, 'name_invalid'],
    ['a number as name', { name: 42, plan: 'standard' }, 'fields_invalid'],
    ['"true" as active', { name: 'x', plan: 'standard', active: 'true' }, 'fields_invalid'],
    ['1 as active', { name: 'x', plan: 'standard', active: 1 }, 'fields_invalid'],
    ['null as plan', { name: 'x', plan: null }, 'fields_invalid'],
    ['an unknown field', { name: 'x', plan: 'standard', admin: true }, 'fields_invalid'],
    ['a key of its own', { name: 'x', plan: 'standard', key: 'plauder_x' }, 'fields_invalid'],
    ['a misspelt field', { name: 'x', plan: 'standard', activ: false }, 'fields_invalid'],
  ];
  it.each(cases)('with %s → 400 %s, nothing created', async (_, body, code) => {
    expectRefused(await admin(server, 'keys', { body }), 400, code);
    await expectNothingChanged();
  });
});

describe('changing a key with bad fields', () => {
  const cases: ReadonlyArray<[string, unknown, string]> = [
    ['no field', {}, 'fields_invalid'],
    ['an unknown plan', { plan: 'gold' }, 'plan_unknown'],
    ['"false" as active', { active: 'false' }, 'fields_invalid'],
    ['an empty name', { name: '' }, 'name_invalid'],
    ['a blank name', { name: ' \t ' }, 'name_invalid'],
    ['an unknown field', { plan: 'plus', revoked: true }, 'fields_invalid'],
    ['a valid and an invalid field', { name: 'ok', plan: 'gold' }, 'plan_unknown'],
  ];
  it.each(cases)('with %s → 400 %s, nothing changed', async (_, body, code) => {
    expectRefused(await admin(server, `keys/${keyId}`, { method: 'PATCH', body }), 400, code);
    await expectNothingChanged();
  });
});

describe('rotating with a bad grace', () => {
  const cases: ReadonlyArray<[string, unknown, string]> = [
    ['a word', { grace: 'soon' }, 'grace_invalid'],
    ['an empty string', { grace: '' }, 'grace_invalid'],
    ['a negative duration', { grace: '-1h' }, 'grace_invalid'],
    ['an unknown unit', { grace: '2w' }, 'grace_invalid'],
    ['an overlong value', { grace: '1'.repeat(40) }, 'grace_invalid'],
    ['more than a year', { grace: '366d' }, 'grace_invalid'],
    ['a date beyond what a date can hold', { grace: '100000000d' }, 'grace_invalid'],
    ['a number', { grace: 3600 }, 'fields_invalid'],
    ['an unknown field', { grace: '1h', notify: true }, 'fields_invalid'],
  ];
  it.each(cases)('with %s → 400 %s, the key keeps its secret', async (_, body, code) => {
    expectRefused(await admin(server, `keys/${keyId}/rotate`, { body }), 400, code);
    await expectNothingChanged();
  });
});

describe('unknown and malformed key ids', () => {
  const ids = [
    'key_0000000000000000',
    'abc',
    'key_',
    'KEY_ABC',
    'key_abc%20def',
    `${'key_'}${'a'.repeat(70)}`,
  ];
  it.each(ids)('%s → 404 key_not_found on every key route', async (id) => {
    const routes: ReadonlyArray<[string, string, unknown?]> = [
      ['GET', `keys/${id}`],
      ['PATCH', `keys/${id}`, { active: false }],
      ['POST', `keys/${id}/rotate`, {}],
      ['POST', `keys/${id}/revoke`],
      ['GET', `keys/${id}/usage`],
    ];
    for (const [method, path, body] of routes) {
      const res = await admin(server, path, { method, ...(body ? { body } : {}) });
      expectRefused(res, 404, 'key_not_found');
    }
    await expectNothingChanged();
  });
});

describe('usage of a bad month', () => {
  const months = [
    '2026-13',
    '2026-00',
    '2026-1',
    '26-01',
    '2026/01',
    '',
    'now',
    '2026-01-01',
    '2026-01&month=2026-02',
  ];
  it.each(months)('?month=%s → 400 month_invalid', async (month) => {
    expectRefused(await admin(server, `usage?month=${month}`), 400, 'month_invalid');
  });
});

describe('unknown admin routes and methods', () => {
  it.each([
    ['GET', 'keyz'],
    ['POST', `keys/{id}/delete`],
  ])('%s /admin/v1/%s → 404 not_found', async (method, path) => {
    const res = await admin(server, path.replace('{id}', keyId), { method });
    expectRefused(res, 404, 'not_found');
    await expectNothingChanged();
  });

  it.each([
    ['PUT', 'keys', 'GET, HEAD, POST'],
    ['DELETE', `keys/{id}`, 'GET, HEAD, PATCH'],
  ])('%s /admin/v1/%s → 405 method_not_allowed, Allow: %s', async (method, path, allow) => {
    const res = await admin(server, path.replace('{id}', keyId), { method });
    expectRefused(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe(allow);
    await expectNothingChanged();
  });
});

it('answers only errors that its routes declare', () => expectDeclaredAnswers(server));
