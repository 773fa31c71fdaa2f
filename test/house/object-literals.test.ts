/**
 * Object literals that Node 20's V8 makes expensive, kept off the request path.
 *
 * On Node 20 (V8 11.3) an object literal with a getter or setter, or with a spread followed
 * by another member (`{ ...a, b }`, `{ ...a, ...b }`), is allocated so that it survives the
 * young generation: a scavenge copies it and V8 promotes it to the old generation, where it
 * waits for a full collection, together with everything it references. One such object per
 * request made every scavenge of the chat path copy 1-2 MB and pause for 2-3 ms, which was
 * most of the p99 at concurrency 1 (bench/README.md, "Garbage the request path leaves").
 * Node 22 no longer does this for spreads; getters still cost there too. A spread as the
 * last member (`{ a, ...b }`) and `Object.assign` are not affected.
 *
 * Files that build their objects once at start-up, or for an operator's command, may keep
 * the clearer spread form; every other file is on some request's path.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from '../helpers/source-files.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Start-up, configuration, schemas and operators' commands: never per chat request. */
const OFF_THE_REQUEST_PATH = new Set([
  'app.ts',
  'services.ts',
  'cli/keys-command.ts',
  'core/builtin/knowledge/knowledge-index.ts',
  'core/builtin/knowledge/knowledge-parser.ts',
  'core/openai/openai-config.ts',
  'events/webhook-sender.ts',
  'keys/key-service.ts',
  'routes/admin/admin-schemas.ts',
  'routes/admin/event-routes.ts',
  'routes/admin/key-routes.ts',
  'routes/mcp/mcp-schemas.ts',
  'routes/mcp/mcp-tools.ts',
  'routes/ops/ops-routes.ts',
  'routes/v1/v1-schemas.ts',
  'storage/postgres/open-postgres.ts',
  'storage/repositories/keys-repository.ts',
]);

interface Finding {
  readonly file: string;
  readonly line: number;
  readonly kind: 'accessor' | 'spread before another member';
}

/** Every object literal with an accessor, or with a spread that is not its last member. */
function findCostlyLiterals(file: string, text: string): Finding[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const findings: Finding[] = [];
  const at = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const visit = (node: ts.Node) => {
    if (ts.isObjectLiteralExpression(node)) {
      const members = node.properties;
      members.forEach((member, index) => {
        if (ts.isGetAccessorDeclaration(member) || ts.isSetAccessorDeclaration(member)) {
          findings.push({ file, line: at(member), kind: 'accessor' });
        } else if (ts.isSpreadAssignment(member) && index < members.length - 1) {
          findings.push({ file, line: at(member), kind: 'spread before another member' });
        }
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return findings;
}

describe('object literals on the request path', () => {
  it('finds the costly forms it is meant to find, and only those', () => {
    const found = findCostlyLiterals(
      'example.ts',
      [
        'const a = { ...x, y };',
        'const b = { ...x, ...y };',
        'const c = { get z() { return 1; } };',
        'const d = { y, ...x };',
        'const e = { ...x };',
        'const f = Object.assign({}, x, { y });',
      ].join('\n'),
    );
    expect(found.map((f) => [f.line, f.kind])).toEqual([
      [1, 'spread before another member'],
      [2, 'spread before another member'],
      [3, 'accessor'],
    ]);
  });

  it('has no getter or setter in an object literal anywhere in src/', () => {
    const found = sourceFiles(SRC).flatMap((file) =>
      findCostlyLiterals(file, readFileSync(file, 'utf8')).filter((f) => f.kind === 'accessor'),
    );
    expect(found).toEqual([]);
  });

  it('has no spread followed by another member outside the start-up and operator files', () => {
    const found = sourceFiles(SRC)
      .filter((file) => !OFF_THE_REQUEST_PATH.has(path.relative(SRC, file)))
      .flatMap((file) => findCostlyLiterals(file, readFileSync(file, 'utf8')))
      .map((f) => `${path.relative(SRC, f.file)}:${f.line} ${f.kind}`);
    expect(found).toEqual([]);
  });

  it('lists only files that exist', () => {
    for (const file of OFF_THE_REQUEST_PATH) {
      expect(statSync(path.join(SRC, file)).isFile(), file).toBe(true);
    }
  });
});
