/**
 * The console's files at /admin/: every file of web/ served from memory with its content
 * type and a strict Content-Security-Policy; no inline script, nothing from elsewhere.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, WEB_DIR } from '../../src/routes/admin/console-routes.js';
import { http, type TestServer } from '../helpers/test-server.js';
import { startAdminServer } from './admin-client.js';

const TYPES: Record<string, RegExp> = {
  '.html': /^text\/html; charset=utf-8$/,
  '.css': /^text\/css; charset=utf-8$/,
  '.js': /^text\/javascript; charset=utf-8$/,
  '.svg': /^image\/svg\+xml$/,
};

const webFiles = fs
  .readdirSync(WEB_DIR, { recursive: true, encoding: 'utf8' })
  .filter((name) => fs.statSync(path.join(WEB_DIR, name)).isFile())
  .map((name) => name.split(path.sep).join('/'));
const servedFiles = webFiles.filter((name) => path.extname(name) in TYPES);
const read = (name: string) => fs.readFileSync(path.join(WEB_DIR, name), 'utf8');

let server: TestServer;
beforeAll(async () => {
  server = await startAdminServer();
});
afterAll(() => server.close());

describe('GET /admin/', () => {
  it('redirects /admin to /admin/, whose relative links need the slash', async () => {
    const res = await fetch(`${server.url}/admin`, { redirect: 'manual' });
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('/admin/');
  });

  it('serves the page with a strict CSP and without needing the token', async () => {
    const res = await http(`${server.url}/admin/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toMatch(/^default-src 'self'/);
    expect(CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.text).toBe(read('index.html'));
  });

  it.each(servedFiles)('serves web/%s with its content type', async (name) => {
    const res = await http(`${server.url}/admin/${name}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(TYPES[path.extname(name)] as RegExp);
    expect(res.text).toBe(read(name));
    expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
  });

  it('answers 404 not_found for unknown files, notes for developers and escapes from the folder', async () => {
    for (const p of [
      'nope.js',
      'README.md',
      '%2e%2e/package.json',
      '..%2fpackage.json',
      'js/../../package.json',
    ]) {
      const res = await http(`${server.url}/admin/${p}`);
      expect(res.status, p).toBe(404);
      expect(res.json.error.code).toBe('not_found');
    }
  });
});

describe('the console files themselves', () => {
  it('have no inline script, no inline style and no event handler attributes', () => {
    const html = read('index.html');
    for (const tag of html.match(/<script\b[^>]*>/g) ?? []) expect(tag).toMatch(/\bsrc="/);
    expect(html).not.toMatch(/<script\b[^>]*>[^<\s]/);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toMatch(/\sstyle=/i);
    expect(html).not.toMatch(/<style\b/i);
  });

  it('load nothing from another origin and never write API data as HTML', () => {
    for (const name of servedFiles) {
      const text = read(name).replaceAll('http://www.w3.org/2000/svg', '');
      expect(text, name).not.toMatch(/https?:\/\/|\/\/cdn|@import/);
      expect(text, name).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
      expect(text, name).not.toMatch(/\beval\(|new Function\(/);
    }
    for (const match of read('index.html').matchAll(/\s(?:src|href)="([^"]+)"/g)) {
      expect(match[1]).not.toMatch(/^(https?:)?\/\//);
    }
  });

  it('keep the admin token in sessionStorage only, never in localStorage or a cookie', () => {
    const js = servedFiles
      .filter((n) => n.endsWith('.js'))
      .map(read)
      .join('\n');
    expect(js).toMatch(/sessionStorage\.setItem\(TOKEN_KEY/);
    expect(js).not.toMatch(/document\.cookie/);
    expect(js.match(/localStorage\.setItem\([^)]*\)/g)).toEqual([
      'localStorage.setItem(STORAGE_KEY, next)',
    ]);
  });
});
