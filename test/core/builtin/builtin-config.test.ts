import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONFIDENCE_THRESHOLD,
  DEFAULT_KNOWLEDGE_PATH,
  readBuiltinCoreConfig,
} from '../../../src/core/builtin/builtin-config.js';
import { createBuiltinCore } from '../../../src/core/builtin/create-builtin-core.js';
import { DEFAULT_SERVICE_FACTS } from '../../../src/core/builtin/service-facts.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SAMPLE = join(ROOT, 'knowledge/plauder.kb');

describe('builtin core configuration', () => {
  it('defaults to the shipped sample at the package root', () => {
    expect(DEFAULT_KNOWLEDGE_PATH).toBe(SAMPLE);
    expect(existsSync(DEFAULT_KNOWLEDGE_PATH)).toBe(true);
    const problems: string[] = [];
    expect(readBuiltinCoreConfig({}, problems)).toEqual({
      knowledgePath: SAMPLE,
      confidenceThreshold: DEFAULT_CONFIDENCE_THRESHOLD,
      facts: DEFAULT_SERVICE_FACTS,
    });
    expect(problems).toEqual([]);
  });

  it('resolves the default the same way from the compiled file in dist/', () => {
    // The module sits three levels below the root in src/ and in dist/ alike.
    const compiled = pathToFileURL(join(ROOT, 'dist/core/builtin/builtin-config.js'));
    expect(fileURLToPath(new URL('../../../knowledge/plauder.kb', compiled))).toBe(SAMPLE);
  });

  it('loads the default knowledge base without options', async () => {
    const core = createBuiltinCore();
    expect(core.name).toBe('builtin');
    const reply = await core.reply({
      language: 'en',
      message: 'How many requests per month?',
      history: [],
      signal: new AbortController().signal,
    });
    expect(reply).toContain('1000');
  });

  it('reads PLAUDER_KNOWLEDGE relative to the working directory', () => {
    const problems: string[] = [];
    const config = readBuiltinCoreConfig({ PLAUDER_KNOWLEDGE: 'knowledge/plauder.kb' }, problems);
    expect(config.knowledgePath).toBe(resolve('knowledge/plauder.kb'));
  });

  it('reports a knowledge file that does not exist', () => {
    const problems: string[] = [];
    readBuiltinCoreConfig({ PLAUDER_KNOWLEDGE: '/nowhere/kb.kb' }, problems);
    expect(problems).toEqual(['PLAUDER_KNOWLEDGE: no such file: /nowhere/kb.kb']);
  });

  it.each(['0', '-0.2', '1.5', 'high', 'NaN'])('reports PLAUDER_BUILTIN_THRESHOLD=%s', (value) => {
    const problems: string[] = [];
    const config = readBuiltinCoreConfig({ PLAUDER_BUILTIN_THRESHOLD: value }, problems);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^PLAUDER_BUILTIN_THRESHOLD: expected a number/);
    expect(config.confidenceThreshold).toBe(DEFAULT_CONFIDENCE_THRESHOLD);
  });

  it('accepts a threshold in (0, 1]', () => {
    const problems: string[] = [];
    const config = readBuiltinCoreConfig({ PLAUDER_BUILTIN_THRESHOLD: ' 0.7 ' }, problems);
    expect(config.confidenceThreshold).toBe(0.7);
    expect(problems).toEqual([]);
  });
});
