import { it } from 'vitest';
import { createBuiltinCore } from '../../../src/core/builtin/create-builtin-core.js';
import type { Language } from '../../../src/core/core-adapter.js';

it('explain', () => {
  const core = createBuiltinCore(process.env.KB ? { knowledgePath: process.env.KB } : {});
  for (const line of (process.env.ASK ?? '').split('\n').filter(Boolean)) {
    const e = core.explain((process.env.LANG2 ?? 'en') as Language, line, []);
    console.log('> ' + line + '\n  ' + e.reply);
    for (const c of e.analysis?.clauses ?? []) {
      console.log(
        '  clause q=' +
          c.question +
          ' ' +
          c.reading.outcome.kind +
          ' units=' +
          JSON.stringify(c.reading.own.map((u) => u.concepts)),
      );
      for (const m of c.reading.candidates.slice(0, 4))
        console.log(
          `    ${m.entry.entry.id} conf=${m.confidence.toFixed(3)} cov=${m.coverage.toFixed(2)} ev=${m.evidence.toFixed(2)} w=${m.words}`,
        );
    }
  }
});
