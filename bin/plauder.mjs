#!/usr/bin/env node
/**
 * The `plauder` command in a clone of the repository: runs the built CLI (`dist/cli/main.js`)
 * at once, offline and without rebuilding anything, and says what to do when it is not built.
 */
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(
    'plauder: dist/cli/main.js is missing: build it with `npm run build` (`npm ci` builds it too).\n',
  );
  process.exit(1);
}
await import(main.href);
