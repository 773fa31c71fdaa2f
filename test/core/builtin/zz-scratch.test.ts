import { it } from 'vitest';
import { createBuiltinCore } from '../../../src/core/builtin/create-builtin-core.js';
import type { Language, Turn } from '../../../src/core/core-adapter.js';

it('scratch', async () => {
  const lines = (process.env.ASK ?? '').split('\n').filter(Boolean);
  const out: string[] = [];
  let core = createBuiltinCore();
  let language: Language = 'en';
  let history: Turn[] = [];
  const signal = new AbortController().signal;
  for (const line of lines) {
    if (line.startsWith('#kb ')) {
      core = createBuiltinCore({ knowledgePath: line.slice(4) });
      history = [];
      continue;
    }
    if (line === '#de' || line === '#en') {
      language = line.slice(1) as Language;
      history = [];
      continue;
    }
    if (line === '#new') {
      history = [];
      continue;
    }
    const reply = await core.reply({ language, message: line, history, signal });
    out.push(`> ${line}\n  ${reply}`);
    history.push({ message: line, reply, language });
  }
  console.log(out.join('\n'));
});
