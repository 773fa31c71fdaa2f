/**
 * @module version
 * The service's version, read from package.json: the one place it is written. The CLI's
 * `--version`, the OpenAPI document's `info.version` and the MCP server's version use it.
 */
import { readFileSync } from 'node:fs';

// `src/version.ts` and `dist/version.js` both sit one level below package.json.
const packageJson = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
) as { version: string };

export const VERSION: string = packageJson.version;
