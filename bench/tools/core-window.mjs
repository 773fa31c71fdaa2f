#!/usr/bin/env node
/**
 * CPU per reply of the built-in core alone with the session scenarios' 20-turn window (the
 * bench question asked 20 times, lib/conversation.mjs), the way the server hands it: the
 * same history strings on every request. 5 rounds of 20 000 replies, median.
 *
 *   node bench/tools/core-window.mjs <checkout> [--miss]
 *
 * `<checkout>` is a built tree (its dist/ and knowledge/): this one, or an earlier commit
 * checked out with `git worktree add` (node_modules linked), run alternately with this one.
 * `--miss` makes every message parse miss the core's kept parses (the bench window repeats
 * one question, so as served every parse is found: the best case; a real conversation's
 * new message and newest earlier turn are parsed, its two older turns found).
 */
import path from 'node:path';

const [rootArg = '.', mode] = process.argv.slice(2);
const root = path.resolve(rootArg);
const { createBuiltinCore } = await import(`${root}/dist/core/builtin/create-builtin-core.js`);
if (mode === '--miss') {
  const reader = await import(`${root}/dist/core/builtin/conversation/message-reader.js`);
  if (!reader.MessageParses) throw new Error(`${root} keeps no parses: --miss means nothing there`);
  reader.MessageParses.prototype.get = (_message, _options, parse) => parse();
}
const { conversation, MESSAGE } = await import('../lib/conversation.mjs');
const core = createBuiltinCore();
const history = await conversation(20, core);
const signal = new AbortController().signal;

const round = async (count) => {
  const start = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    await core.reply({ language: 'de', message: MESSAGE, history, signal });
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / count;
};

const rounds = [];
for (let i = 0; i < 5; i++) rounds.push(await round(20_000));
const sorted = [...rounds].sort((a, b) => a - b);
console.log(
  JSON.stringify({
    root,
    parses: mode === '--miss' ? 'all missed' : 'as served',
    cpuUsPerReply: +(sorted[2] ?? 0).toFixed(1),
    rounds: rounds.map((us) => +us.toFixed(1)),
  }),
);
