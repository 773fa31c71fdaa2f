/**
 * Micro-benchmark of the built-in conversational core (no HTTP, no database): replays a
 * realistic mix of requests many times and prints the time per reply.
 *
 *   npm run bench:core                                   # builds, then runs
 *   node bench/core/core-bench.mjs [--rounds 500] [--json-only]   # after `npm run build`
 *   node bench/core/core-bench.mjs --nlpjs               # also NLP.js on the same requests
 *
 * `--nlpjs` installs NLP.js into bench/core/peers on first use (its own package.json and
 * lock; never a dependency of the project), trains it on the same knowledge base (each
 * entry an intent, its topics and keywords the utterances, its answers the answers) and
 * times `nlp.process(language, message)` for the same messages, in the same process.
 *
 * See bench/core/README.md for what the mix contains and how to read the numbers.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createBuiltinCore } from '../../dist/core/builtin/create-builtin-core.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '500' },
    'json-only': { type: 'boolean', default: false },
    nlpjs: { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(values.rounds);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error('--rounds must be a positive integer');

/** Conversations replayed with their growing history, as a session would send them. */
const CONVERSATIONS = [
  [
    'de',
    [
      'Hallo!',
      'Wie viele Anfragen habe ich im Monat?',
      'Und im Plus-Plan?',
      'Und wann wird das zurückgesetzt?',
      'Danke, tschüss!',
    ],
  ],
  [
    'en',
    [
      'Hi there',
      'How many requests do I get per month?',
      'And on the Plus plan?',
      'What happens when I hit the limit?',
      'Thanks!',
    ],
  ],
  ['de', ['Ich heiße Anna.', 'Was ist eine Session?', 'Und wie lange?', 'Wie heiße ich?']],
  [
    'en',
    [
      "I'm Sam",
      'How do I rotate my key?',
      'And how long does the old one stay valid?',
      "What's my name?",
    ],
  ],
  [
    'de',
    [
      'Wie bekomme ich einen API-Schlüssel?',
      'Wie sieht der aus?',
      'Darf ich ihn im Browser verwenden?',
      'Mein Schlüssel wurde geleakt, was tun?',
    ],
  ],
  ['en', ['What does 401 mean?', 'And 429?', 'What about 500?', 'What is a soft error?']],
  // One long session: 20 turns of history, the default memory window.
  [
    'de',
    [
      'Hallo',
      'Welche Pläne gibt es?',
      'Und der Plus-Plan?',
      'Wann wird der Zähler zurückgesetzt?',
      'In welcher Zeitzone?',
      'Was passiert am Limit?',
      'Wie prüfe ich meinen Verbrauch?',
      'Was ist eine Session?',
      'Wie lange wird sie gespeichert?',
      'Wie lösche ich sie?',
      'Wie bekomme ich einen Schlüssel?',
      'Wie rotiere ich ihn?',
      'Und wie widerrufe ich ihn?',
      'Welche Statuscodes gibt es?',
      'Was bedeutet 429?',
      'Wie lang darf eine Nachricht sein?',
      'Welche Endpunkte gibt es?',
      'Wie authentifiziere ich mich?',
      'Was kostet das?',
      'Danke!',
      'Und im Standard-Plan?',
    ],
  ],
];

/** Single requests without a session: hits, typos, compounds, word order, misses, small talk. */
const SINGLES = [
  ['de', 'Wann wird das Anfragelimit zurückgesetzt?'],
  ['de', 'Wie rotire ich meinen Schlüsel?'],
  ['de', 'Im Monat Anfragen wie viele habe ich?'],
  ['de', 'Was ist die Hauptstadt von Frankreich?'],
  ['de', 'Wer bist du?'],
  ['de', 'How many requests do I get per month?'],
  ['en', 'How many reqeusts do I get per month?'],
  ['en', 'Wie lange werden Sessions gespeichert?'],
  ['en', 'Can I order pizza with plauder?'],
  ['en', 'What can you do?'],
  ['en', 'Which characters are allowed in a sessionId?'],
  ['en', "What's the difference between standard and plus?"],
];

/** Repeated up to 4000 characters: a question buried in a long message. */
const MAXIMUM_LENGTH = [
  ['de', 'Wie viele Anfragen habe ich im Monat und was passiert am Limit? '],
  ['en', 'How many requests do I get per month and what happens at the limit? '],
];

/** A deterministic PRNG, so every run replays the same "novel" messages. */
function prng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}
const random = prng(42);
const LETTERS = 'abcdefghijklmnopqrstuvwxyzäöü';
/** Words never seen before defeat the token cache and exercise compound and typo search. */
function novelMessage() {
  const words = [];
  const count = 3 + Math.floor(random() * 6);
  for (let i = 0; i < count; i++) {
    let word = '';
    const length = 3 + Math.floor(random() * 10);
    for (let j = 0; j < length; j++) word += LETTERS[Math.floor(random() * LETTERS.length)];
    words.push(word);
  }
  return `${words.join(' ')}?`;
}

const signal = new AbortController().signal;
const core = createBuiltinCore();

/** Builds the request list once (replies included in the history), outside the timing. */
async function buildRequests() {
  const requests = [];
  for (const [language, messages] of CONVERSATIONS) {
    const history = [];
    for (const message of messages) {
      const kind =
        history.length === 0
          ? 'first turn'
          : history.length >= 10
            ? 'long history'
            : 'with history';
      requests.push({ kind, request: { language, message, history: [...history], signal } });
      const reply = await core.reply({ language, message, history, signal });
      history.push({ message, reply, language });
    }
  }
  for (const [language, message] of SINGLES) {
    requests.push({ kind: 'single', request: { language, message, history: [], signal } });
  }
  // Messages of the maximum length (PLAUDER_MESSAGE_MAX_CHARS, 4000): the work per
  // character must stay linear.
  for (const [language, sentence] of MAXIMUM_LENGTH) {
    const message = sentence.repeat(Math.ceil(4000 / sentence.length)).slice(0, 4000);
    requests.push({ kind: 'maximum length', request: { language, message, history: [], signal } });
  }
  return requests;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function summarise(samples) {
  const sorted = Float64Array.from(samples).sort();
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  return {
    count: samples.length,
    medianMs: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    p999Ms: percentile(sorted, 99.9),
    meanMs: mean,
    maxMs: sorted[sorted.length - 1],
  };
}

const requests = await buildRequests();
const byKind = new Map();
const all = [];
/** CPU time of this process per reply: what other processes on a shared machine do not inflate. */
const cpuAll = [];
const record = (kind, ms) => {
  all.push(ms);
  const samples = byKind.get(kind) ?? [];
  byKind.set(kind, samples);
  samples.push(ms);
};
// Warm-up: let V8 optimise before measuring.
for (let i = 0; i < 20; i++) for (const { request } of requests) await core.reply(request);

const started = performance.now();
for (let round = 0; round < ROUNDS; round++) {
  const novel = {
    kind: 'novel words',
    request: { language: round % 2 ? 'de' : 'en', message: novelMessage(), history: [], signal },
  };
  for (const { kind, request } of [...requests, novel]) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await core.reply(request);
    record(kind, performance.now() - t0);
    const cpu = process.cpuUsage(c0);
    cpuAll.push((cpu.user + cpu.system) / 1000);
  }
}
const elapsedMs = performance.now() - started;

const total = summarise(all);
const cpuTotal = summarise(cpuAll);
const fmt = (ms) => `${(ms * 1000).toFixed(1)} µs`;
const peer = values.nlpjs ? await benchNlpJs(requests) : undefined;
if (!values['json-only']) {
  console.log(
    `built-in core: ${total.count} replies in ${elapsedMs.toFixed(0)} ms (${(total.count / (elapsedMs / 1000)).toFixed(0)} replies/s), Node ${process.version}`,
  );
  console.log(
    `all replies   median ${fmt(total.medianMs)}  p99 ${fmt(total.p99Ms)}  p99.9 ${fmt(total.p999Ms)}  max ${fmt(total.maxMs)}`,
  );
  console.log(
    `CPU time      median ${fmt(cpuTotal.medianMs)}  p99 ${fmt(cpuTotal.p99Ms)}  p99.9 ${fmt(cpuTotal.p999Ms)}  max ${fmt(cpuTotal.maxMs)}`,
  );
  for (const [kind, samples] of byKind) {
    const s = summarise(samples);
    console.log(
      `  ${kind.padEnd(13)} median ${fmt(s.medianMs)}  p99 ${fmt(s.p99Ms)}  (${s.count} replies)`,
    );
  }
}
if (peer !== undefined && !values['json-only']) {
  console.log(
    `NLP.js ${peer.version} (same messages, no history): median ${fmt(peer.medianMs)}  p99 ${fmt(peer.p99Ms)}  p99.9 ${fmt(peer.p999Ms)}  max ${fmt(peer.maxMs)}  (${peer.count} replies, trained in ${peer.trainMs.toFixed(0)} ms)`,
  );
  console.log(
    `NLP.js CPU time  median ${fmt(peer.cpu.medianMs)}  p99 ${fmt(peer.cpu.p99Ms)}  p99.9 ${fmt(peer.cpu.p999Ms)}`,
  );
}
console.log(
  JSON.stringify({
    bench: 'core-builtin',
    node: process.version,
    rounds: ROUNDS,
    ...total,
    cpu: cpuTotal,
    byKind: Object.fromEntries([...byKind].map(([kind, samples]) => [kind, summarise(samples)])),
    ...(peer === undefined ? {} : { nlpjs: peer }),
  }),
);

/** Installs bench/core/peers on first use; returns a require() that resolves from there. */
function peerRequire() {
  const peers = fileURLToPath(new URL('./peers/', import.meta.url));
  if (!existsSync(`${peers}node_modules/@nlpjs/basic`)) {
    if (!values['json-only']) console.log('installing NLP.js into bench/core/peers (first use)');
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const result = spawnSync(npm, ['ci', '--prefix', peers, '--no-audit', '--no-fund'], {
      stdio: 'inherit',
    });
    if (result.status !== 0) throw new Error('npm ci in bench/core/peers failed');
  }
  return createRequire(`${peers}package.json`);
}

/** NLP.js trained on the same knowledge base, timed on the same messages. */
async function benchNlpJs(requests) {
  const require = peerRequire();
  const { containerBootstrap, Nlp } = {
    ...require('@nlpjs/basic'),
    Nlp: require('@nlpjs/nlp').Nlp,
  };
  const { LangDe } = require('@nlpjs/lang-de');
  const { LangEn } = require('@nlpjs/lang-en-min');
  const container = await containerBootstrap();
  container.use(LangDe);
  container.use(LangEn);
  const nlp = new Nlp({
    languages: ['de', 'en'],
    autoSave: false,
    autoLoad: false,
    nlu: { log: false },
  });
  nlp.container = container;
  await nlp.start?.();
  for (const indexed of core.index().entries) {
    const { entry } = indexed;
    const intent = entry.id;
    for (const language of ['de', 'en']) {
      nlp.addDocument(language, entry.topic[language], intent);
      for (const keyword of entry.keywords) nlp.addDocument(language, keyword.text, intent);
      nlp.addAnswer(language, intent, indexed.answer(language, core.index().facts.plans[0]));
    }
  }
  const trainStarted = performance.now();
  await nlp.train();
  const trainMs = performance.now() - trainStarted;
  const process_ = (request) => nlp.process(request.language, request.message);
  for (let i = 0; i < 5; i++) for (const { request } of requests) await process_(request);
  const samples = [];
  const cpu = [];
  for (let round = 0; round < Math.max(1, Math.floor(ROUNDS / 5)); round++) {
    for (const { request } of requests) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await process_(request);
      samples.push(performance.now() - t0);
      const used = process.cpuUsage(c0);
      cpu.push((used.user + used.system) / 1000);
    }
  }
  const version = require('@nlpjs/basic/package.json').version;
  return { version, trainMs, ...summarise(samples), cpu: summarise(cpu) };
}
