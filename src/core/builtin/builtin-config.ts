/**
 * @module core/builtin/builtin-config
 * Settings of the built-in core and how they are read from the environment:
 * - `PLAUDER_KNOWLEDGE`: path of the knowledge-base file (relative paths from the working
 *   directory); default: the shipped sample `knowledge/plauder.kb` of the package.
 * - `PLAUDER_BUILTIN_THRESHOLD`: the confidence (0 < t ≤ 1) an answer needs; below it the
 *   core says it does not know. Default 0.4 (knowledge/README.md, "Threshold").
 * - the service's facts the answers quote (plans, time zone, retention, ...): from the
 *   same variables as the rest of the configuration (`service-facts.ts`).
 */
import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  decimal,
  type Env,
  matching,
  optional,
  readSettings,
  type Setting,
  setting,
} from '../../util/settings.js';
import { readServiceFacts, type ServiceFacts } from './service-facts.js';

export interface BuiltinCoreOptions {
  /** Path of the knowledge-base file; default `DEFAULT_KNOWLEDGE_PATH`. */
  readonly knowledgePath?: string;
  /** Minimum confidence for an answer, in (0, 1]; default `DEFAULT_CONFIDENCE_THRESHOLD`. */
  readonly confidenceThreshold?: number;
  /** What the answers say about the service; default: the default configuration's. */
  readonly facts?: ServiceFacts;
}

/** Three levels below the package root both as `src/core/builtin/*.ts` and `dist/core/builtin/*.js`. */
export const DEFAULT_KNOWLEDGE_PATH = fileURLToPath(
  new URL('../../../knowledge/plauder.kb', import.meta.url),
);
export const DEFAULT_CONFIDENCE_THRESHOLD = 0.4;

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

/** The knowledge file `PLAUDER_KNOWLEDGE` names (or the default), resolved. */
export function knowledgePathOf(raw: string | undefined): string {
  const path = raw?.trim();
  if (path === undefined || path === '' || path.includes('\0')) return DEFAULT_KNOWLEDGE_PATH;
  return isAbsolute(path) ? path : resolve(path);
}

const SETTINGS = {
  // Unset: the shipped sample; the file itself is checked below, once resolved.
  knowledge: optional(
    'PLAUDER_KNOWLEDGE',
    matching('a file path', (path) => !path.includes('\0')),
  ),
  threshold: setting(
    'PLAUDER_BUILTIN_THRESHOLD',
    decimal(0, 1, { above: true }),
    String(DEFAULT_CONFIDENCE_THRESHOLD),
  ),
} satisfies Record<string, Setting<unknown>>;

export const BUILTIN_SETTINGS: readonly Setting<unknown>[] = Object.values(SETTINGS);

/**
 * Reads the built-in core's settings. Invalid values are reported in `problems` (one
 * human-readable line each) instead of thrown, so all configuration problems can be
 * shown together. The file itself is read by `createBuiltinCore`.
 */
export function readBuiltinCoreConfig(env: Env, problems: string[]): Required<BuiltinCoreOptions> {
  const { knowledge, threshold } = readSettings(env, SETTINGS, problems);
  const knowledgePath = knowledgePathOf(knowledge);
  if (!env.PLAUDER_KNOWLEDGE?.includes('\0') && !isFile(knowledgePath)) {
    problems.push(`PLAUDER_KNOWLEDGE: no such file: ${knowledgePath}`);
  }
  return { knowledgePath, confidenceThreshold: threshold, facts: readServiceFacts(env) };
}
