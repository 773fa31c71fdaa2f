/**
 * @module core/builtin/builtin-config
 * Settings of the built-in core and how they are read from the environment:
 * - `PLAUDER_KNOWLEDGE`: path of the knowledge-base file (relative paths from the working
 *   directory); default: the shipped sample `knowledge/plauder.kb` of the package.
 * - `PLAUDER_BUILTIN_THRESHOLD`: the confidence (0 < t ≤ 1) an answer needs; below it the
 *   core says it does not know. Default 0.5.
 */
import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BuiltinCoreOptions {
  /** Path of the knowledge-base file; default `DEFAULT_KNOWLEDGE_PATH`. */
  readonly knowledgePath?: string;
  /** Minimum confidence for an answer, in (0, 1]; default `DEFAULT_CONFIDENCE_THRESHOLD`. */
  readonly confidenceThreshold?: number;
}

/** Three levels below the package root both as `src/core/builtin/*.ts` and `dist/core/builtin/*.js`. */
export const DEFAULT_KNOWLEDGE_PATH = fileURLToPath(
  new URL('../../../knowledge/plauder.kb', import.meta.url),
);
export const DEFAULT_CONFIDENCE_THRESHOLD = 0.5;

/** Whether `value` is a usable confidence threshold. */
export function isValidThreshold(value: number): boolean {
  return Number.isFinite(value) && value > 0 && value <= 1;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function readThreshold(raw: string | undefined, problems: string[]): number {
  if (raw === undefined || raw.trim() === '') return DEFAULT_CONFIDENCE_THRESHOLD;
  const value = Number(raw.trim());
  if (!isValidThreshold(value)) {
    problems.push(
      `PLAUDER_BUILTIN_THRESHOLD: expected a number greater than 0 and at most 1, got "${raw}"`,
    );
    return DEFAULT_CONFIDENCE_THRESHOLD;
  }
  return value;
}

/**
 * Reads the built-in core's settings. Invalid values are reported in `problems` (one
 * human-readable line each) instead of thrown, so all configuration problems can be
 * shown together. The file itself is read by `createBuiltinCore`.
 */
export function readBuiltinCoreConfig(
  env: Readonly<Record<string, string | undefined>>,
  problems: string[],
): Required<BuiltinCoreOptions> {
  const raw = env.PLAUDER_KNOWLEDGE?.trim();
  let knowledgePath = DEFAULT_KNOWLEDGE_PATH;
  if (raw !== undefined && raw !== '') {
    if (raw.includes('\0')) problems.push('PLAUDER_KNOWLEDGE: expected a file path');
    else knowledgePath = isAbsolute(raw) ? raw : resolve(raw);
  }
  if (!isFile(knowledgePath)) problems.push(`PLAUDER_KNOWLEDGE: no such file: ${knowledgePath}`);
  return {
    knowledgePath,
    confidenceThreshold: readThreshold(env.PLAUDER_BUILTIN_THRESHOLD, problems),
  };
}
