/**
 * No getter or setter in an object literal in src/.
 *
 * V8 allocates an object literal with an accessor so that it survives the young generation:
 * a scavenge copies it and promotes it to the old generation, with everything it references,
 * where it waits for a full collection. A class or a plain property says the same thing at
 * no such cost, so src/ uses those.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from '../helpers/source-files.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** The lines of every getter or setter declared in an object literal. */
function findAccessorsInLiterals(file: string, text: string): number[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lines: number[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isObjectLiteralExpression(node)) {
      for (const member of node.properties) {
        if (ts.isGetAccessorDeclaration(member) || ts.isSetAccessorDeclaration(member)) {
          lines.push(source.getLineAndCharacterOfPosition(member.getStart()).line + 1);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return lines;
}

describe('object literals in src/', () => {
  it('finds accessors in object literals, and nothing else', () => {
    const found = findAccessorsInLiterals(
      'example.ts',
      [
        'const a = { ...x, y };',
        'const c = { get z() { return 1; } };',
        'const d = { set z(v) {} };',
        'class E { get z() { return 1; } }',
      ].join('\n'),
    );
    expect(found).toEqual([2, 3]);
  });

  it('has no getter or setter in an object literal', () => {
    const found = sourceFiles(SRC).flatMap((file) =>
      findAccessorsInLiterals(file, readFileSync(file, 'utf8')).map((line) => `${file}:${line}`),
    );
    expect(found).toEqual([]);
  });
});
