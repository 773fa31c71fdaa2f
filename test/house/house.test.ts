/**
 * The house: imports between the top-level parts of src/ (folders, and the files that
 * stand alone beside them), read with the TypeScript compiler's own pre-processor. Each
 * part may import only parts below it in `FLOORS`: no back-arrows, and so no cycles. The
 * drawing in src/README.md is this graph; a test keeps it in step.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from '../helpers/source-files.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Bottom first. A part may import the parts before it, never one after it. */
const FLOORS = [
  'version',
  'util',
  'errors',
  'plans',
  'core',
  'config',
  'storage',
  'events',
  'quota',
  'keys',
  'sessions',
  'idempotency',
  'services',
  'operations',
  'chat',
  'connection-guard',
  'routes',
  'tracing',
  'app',
  'server',
  'cli',
];

/** `src/keys/key-service.ts` → `keys`; `src/app.ts` → `app`. */
function partOf(file: string): string {
  const [first = ''] = path.relative(SRC, file).split(path.sep);
  return first.replace(/\.[jt]s$/, '');
}

/** Every import between two parts: "from → to" with the files that make it. */
function houseEdges(): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const from = partOf(file);
      const to = partOf(path.resolve(path.dirname(file), fileName));
      if (from === to) continue;
      const edge = `${from} → ${to}`;
      edges.set(edge, [...(edges.get(edge) ?? []), path.relative(SRC, file)]);
    }
  }
  return edges;
}

describe('the house', () => {
  const edges = houseEdges();
  const parts = new Set(sourceFiles(SRC).map(partOf));

  it('knows every part of src/', () => {
    expect([...parts].filter((part) => !FLOORS.includes(part))).toEqual([]);
  });

  it('has no back-arrows: every import goes down a floor', () => {
    const back = [...edges]
      .filter(([edge]) => {
        const [from = '', to = ''] = edge.split(' → ');
        return FLOORS.indexOf(from) <= FLOORS.indexOf(to);
      })
      .map(([edge, files]) => `${edge} (${[...new Set(files)].join(', ')})`);
    expect(back).toEqual([]);
  });

  it('is drawn in src/README.md as it is', () => {
    const readme = readFileSync(path.join(SRC, 'README.md'), 'utf8');
    const drawn = [...readme.matchAll(/^\s+([a-z-]+) --> ([a-z-]+)$/gm)].map(
      (m) => `${m[1]} → ${m[2]}`,
    );
    expect(drawn.sort()).toEqual([...edges.keys()].sort());
  });

  it('has front doors that import nothing from another door: what they share sits in routes/', () => {
    const ROUTES = path.join(SRC, 'routes');
    const doorOf = (file: string): string | undefined => {
      const parts = path.relative(ROUTES, file).split(path.sep);
      return parts.length > 1 && parts[0] !== '..' ? parts[0] : undefined;
    };
    const crossings: string[] = [];
    for (const file of sourceFiles(ROUTES)) {
      const from = doorOf(file);
      const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        if (!fileName.startsWith('.')) continue;
        const to = doorOf(path.resolve(path.dirname(file), fileName));
        if (from !== undefined && to !== undefined && to !== from)
          crossings.push(`${path.relative(SRC, file)} → ${fileName}`);
      }
    }
    expect(crossings).toEqual([]);
  });
});
