/**
 * The request-body rules every front door shares (src/routes/request-body.ts): which
 * Content-Type is JSON, which bytes become a JSON object, and when a message is too long.
 * The doors' own tests show each door answering by these rules.
 */
import { describe, expect, it } from 'vitest';
import {
  isJsonContentType,
  isJsonMediaType,
  parseChatFields,
  parseJsonObject,
} from '../../src/routes/request-body.js';
import { codePointLength, hasMoreCodePointsThan } from '../../src/util/code-points.js';

const JSON_TYPE = 'application/json';

describe('request-body rules', () => {
  it('takes JSON only in UTF-8: no charset, or utf-8 in any spelling', () => {
    for (const type of [
      'application/json',
      'Application/JSON ; charset=UTF-8',
      'application/json; charset="utf8"',
      'application/json; foo=bar',
    ]) {
      expect(isJsonContentType(type), type).toBe(true);
    }
    for (const type of [undefined, '', 'json', 'text/plain', 'application/json; charset=latin1']) {
      expect(isJsonContentType(type), String(type)).toBe(false);
    }
    expect(isJsonMediaType('application/json; charset=latin1')).toBe(true);
  });

  it('reads a JSON object from UTF-8 bytes and nothing else', () => {
    const bytes = (text: string) => Buffer.from(text, 'utf8');
    expect(parseJsonObject(JSON_TYPE, bytes('{"message":"Grüß dich"}'))).toEqual({
      message: 'Grüß dich',
    });
    expect(parseJsonObject(JSON_TYPE, bytes('\uFEFF{"a":1}'))).toEqual({ a: 1 });
    expect(parseJsonObject(JSON_TYPE, Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]))).toBe(undefined);
    expect(parseJsonObject(JSON_TYPE, bytes('[1]'))).toBe(undefined);
    expect(parseJsonObject(JSON_TYPE, bytes('{"__proto__":{"x":1}}'))).toBe(undefined);
    expect(parseJsonObject(JSON_TYPE, Buffer.alloc(0))).toBe(undefined);
    expect(parseJsonObject('text/plain', bytes('{"a":1}'))).toBe(undefined);
  });

  it('counts a message in code points: an emoji is one character', () => {
    expect(codePointLength('a😀b')).toBe(3);
    expect(hasMoreCodePointsThan('😀😀', 2)).toBe(false);
    expect(hasMoreCodePointsThan('😀😀😀', 2)).toBe(true);
    expect(parseChatFields({ message: '😀😀' }, 2)).toEqual({
      ok: true,
      message: '😀😀',
      sessionId: undefined,
    });
    expect(parseChatFields({ message: 'abc' }, 2)).toEqual({ ok: false, code: 'message_too_long' });
  });
});
