/**
 * @module routes/admin/console-routes
 * The operators' web console at `/admin/`: the files of `web/`, read once at start-up
 * and served from memory. No request ever touches the file system, so no path can
 * escape the folder. The strict Content-Security-Policy allows only the console's own
 * files: no inline script, no other origin.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/api-error.js';

export interface ConsoleFile {
  readonly body: Buffer;
  readonly contentType: string;
}

/** The console's folder in the package, beside `src/` and `dist/`. */
export const WEB_DIR = fileURLToPath(new URL('../../../web/', import.meta.url));

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
} as const;

/** Every servable file under `dir` by its path relative to it (`js/main.js`). */
export function loadConsoleFiles(dir: string = WEB_DIR): ReadonlyMap<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const contentType = CONTENT_TYPES[path.extname(entry.name)];
    // Only known types: notes such as web/README.md are for developers, not browsers.
    if (!entry.isFile() || contentType === undefined) continue;
    const file = path.join(entry.parentPath, entry.name);
    const relative = path.relative(dir, file).split(path.sep).join('/');
    files.set(relative, { body: fs.readFileSync(file), contentType });
  }
  if (!files.has('index.html'))
    throw new Error(`the admin console is missing: no ${dir}index.html`);
  return files;
}

export async function consoleRoutes(
  app: FastifyInstance,
  { files }: { files: ReadonlyMap<string, ConsoleFile> },
): Promise<void> {
  // The page's relative links need the trailing slash.
  app.get('/admin', { schema: { hide: true } }, (_request, reply) =>
    reply.redirect('/admin/', 308),
  );

  app.get<{ Params: { '*': string } }>(
    '/admin/*',
    { schema: { hide: true } },
    async (request, reply) => {
      const file = files.get(request.params['*'] || 'index.html');
      if (!file) throw new ApiError('not_found');
      return reply.headers(SECURITY_HEADERS).type(file.contentType).send(file.body);
    },
  );
}
