/**
 * No cycle of runtime imports between the files of src/: the floors of house.test.ts keep
 * the parts apart, and this keeps the files inside a part in an order too, so each module
 * is fully evaluated before any module that uses it. Only `import type` and `export type`
 * are erased by the compiler (`verbatimModuleSyntax`) and do not count.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from '../helpers/source-files.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** The relative modules a file loads when it runs (not those it only names types from). */
function runtimeImports(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  for (const statement of source.statements) {
    let specifier: ts.Expression | undefined;
    if (ts.isImportDeclaration(statement)) {
      if (!statement.importClause?.isTypeOnly) specifier = statement.moduleSpecifier;
    } else if (ts.isExportDeclaration(statement) && !statement.isTypeOnly) {
      specifier = statement.moduleSpecifier;
    }
    if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith('.')) {
      found.push(path.resolve(path.dirname(file), specifier.text.replace(/\.js$/, '.ts')));
    }
  }
  return found;
}

/** One cycle of the graph as its files, or undefined when there is none. */
function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const done = new Set<string>();
  const onPath: string[] = [];
  const visit = (file: string): string[] | undefined => {
    const at = onPath.indexOf(file);
    if (at >= 0) return [...onPath.slice(at), file];
    if (done.has(file)) return undefined;
    onPath.push(file);
    for (const next of graph.get(file) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    onPath.pop();
    done.add(file);
    return undefined;
  };
  for (const file of graph.keys()) {
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('runtime imports in src/', () => {
  it('tells runtime imports from type-only ones', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from './b.js';",
      "import { type C } from './c.js';",
      "import { type D, d } from './d.js';",
      "import './e.js';",
      "export { f } from './f.js';",
      "export type { G } from './g.js';",
      "import { readFileSync } from 'node:fs';",
    ].join('\n');
    expect(runtimeImports('/x/y.ts', text)).toEqual([
      '/x/a.ts',
      '/x/c.ts',
      '/x/d.ts',
      '/x/e.ts',
      '/x/f.ts',
    ]);
  });

  it('finds a cycle where there is one', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['b']],
    ]);
    expect(findCycle(graph)).toEqual(['b', 'c', 'b']);
  });

  it('has no cycle', () => {
    const graph = new Map(
      sourceFiles(SRC).map((file) => [file, runtimeImports(file, readFileSync(file, 'utf8'))]),
    );
    const cycle = findCycle(graph)?.map((file) => path.relative(SRC, file));
    expect(cycle).toBeUndefined();
  });
});
