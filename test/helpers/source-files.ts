import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** Every `.ts` file below `dir`, for tests that read the sources themselves. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const file = path.join(dir, entry);
    if (statSync(file).isDirectory()) return sourceFiles(file);
    return file.endsWith('.ts') ? [file] : [];
  });
}
