/**
 * The shipped knowledge base knows the whole service: every feature the documentation
 * describes has an entry that answers a plain question about it, in both languages, and
 * every section of the README (and of the pages under docs/) belongs to such a feature or
 * is named here as one that users do not ask the assistant about.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createBuiltinCore } from '../../../src/core/builtin/create-builtin-core.js';
import type { Language } from '../../../src/core/core-adapter.js';

interface Feature {
  /** The entry that answers about it. */
  readonly entry: string;
  /** A plain question in each language. */
  readonly de: string;
  readonly en: string;
  /** Headings of documentation sections about this feature. */
  readonly headings: RegExp;
}

const FEATURES: readonly Feature[] = [
  {
    entry: 'self-hosting',
    de: 'Wie installiere und starte ich plauder?',
    en: 'How do I install and start plauder?',
    headings: /\b(run it|install|getting started|quick ?start|first reply)\b/i,
  },
  {
    entry: 'endpoints',
    de: 'Welche Endpunkte hat die API?',
    en: 'Which endpoints does the API have?',
    headings: /^(the )?api\b|endpoints|chat endpoints|routes/i,
  },
  {
    entry: 'status-codes',
    de: 'Welche Statuscodes gibt es?',
    en: 'Which status codes are there?',
    headings: /status|errors?\b|decision|^a turn$/i,
  },
  {
    entry: 'streaming',
    de: 'Kann ich die Antwort als Stream bekommen?',
    en: 'Can I get the reply as a stream?',
    headings: /stream|slow readers/i,
  },
  {
    entry: 'openai-door',
    de: 'Funktioniert das OpenAI SDK mit plauder?',
    en: 'Does the OpenAI SDK work with plauder?',
    headings: /openai[- ](sdk|compatible|door)|\/v1/i,
  },
  {
    entry: 'idempotency',
    de: 'Wie wiederhole ich eine Anfrage sicher?',
    en: 'How do I retry a request safely?',
    headings: /retr(y|ies)|idempoten/i,
  },
  {
    entry: 'hang-up',
    de: 'Was passiert, wenn mein Client die Verbindung schließt?',
    en: 'What happens when my client closes the connection?',
    headings: /hang-?ups?|client goes away/i,
  },
  {
    entry: 'key',
    de: 'Was ist ein API-Schlüssel?',
    en: 'What is an API key?',
    headings: /^keys?\b/i,
  },
  {
    entry: 'key-rotate',
    de: 'Wie rotiere ich einen Schlüssel?',
    en: 'How do I rotate a key?',
    headings: /rotat/i,
  },
  {
    entry: 'plans',
    de: 'Welche Pläne gibt es?',
    en: 'Which plans are there?',
    headings: /\bplans?\b/i,
  },
  {
    entry: 'limits',
    de: 'Wie viele Anfragen darf ich pro Monat stellen?',
    en: 'How many requests may I send per month?',
    headings: /quota|monthly|^usage$/i,
  },
  {
    entry: 'quota-reset',
    de: 'Wann wird der Zähler zurückgesetzt?',
    en: 'When is the counter reset?',
    headings: /reset/i,
  },
  {
    entry: 'per-minute',
    de: 'Gibt es ein Limit pro Minute?',
    en: 'Is there a per-minute limit?',
    headings: /per-minute|burst|rate limit/i,
  },
  {
    entry: 'token-budgets',
    de: 'Gibt es ein Budget für Tokens?',
    en: 'Is there a token budget?',
    headings: /token budgets?/i,
  },
  {
    entry: 'key-concurrency',
    de: 'Wie viele Anfragen darf ein Schlüssel gleichzeitig stellen?',
    en: 'How many concurrent requests may one key make?',
    headings: /concurren/i,
  },
  {
    entry: 'webhooks',
    de: 'Schickt plauder Webhooks?',
    en: 'Does plauder send webhooks?',
    headings: /webhook|events/i,
  },
  {
    entry: 'session',
    de: 'Was ist eine Session?',
    en: 'What is a session?',
    headings: /session/i,
  },
  {
    entry: 'mcp',
    de: 'Kann ein Agent plauder über MCP nutzen?',
    en: 'Can an agent use plauder over MCP?',
    headings: /\bmcp\b|agents?/i,
  },
  {
    entry: 'core',
    de: 'Welche Kerne gibt es für die Antworten?',
    en: 'Which cores are there for the replies?',
    headings: /\bcore\b|conversational/i,
  },
  {
    entry: 'core-openai',
    de: 'Kann ich ein Sprachmodell wie Ollama anschließen?',
    en: 'Can I connect a language model such as Ollama?',
    headings: /language model|llm|ollama/i,
  },
  {
    entry: 'core-rasa',
    de: 'Kann plauder vor einem Rasa-Bot laufen?',
    en: 'Can plauder run in front of a Rasa bot?',
    headings: /rasa/i,
  },
  {
    entry: 'configuration',
    de: 'Welche Umgebungsvariablen gibt es?',
    en: 'Which environment variables are there?',
    headings: /configur|settings/i,
  },
  {
    entry: 'several-instances',
    de: 'Kann ich mehrere Instanzen betreiben?',
    en: 'Can I run several instances?',
    headings: /instances|scal|postgres/i,
  },
  {
    entry: 'admin',
    de: 'Gibt es eine Admin-Konsole?',
    en: 'Is there an admin console?',
    headings: /admin|console|\bcli\b|command|\blists\b/i,
  },
  {
    entry: 'operations',
    de: 'Gibt es Metriken für Prometheus?',
    en: 'Are there Prometheus metrics?',
    headings: /\blogs?\b|monitor|metrics|operat|health/i,
  },
  {
    entry: 'browser',
    de: 'Kann ich plauder aus dem Browser aufrufen?',
    en: 'Can I call plauder from a browser?',
    headings: /security|cors|browser/i,
  },
  {
    entry: 'api-docs',
    de: 'Wo ist die API-Dokumentation?',
    en: 'Where is the API documentation?',
    headings: /openapi|documentation|\bdocs\b/i,
  },
  {
    entry: 'anthropic-door',
    de: 'Funktioniert Claude Code mit plauder?',
    en: "Does plauder speak Anthropic's Messages API?",
    headings: /anthropic|messages door/i,
  },
  {
    entry: 'responses-api',
    de: 'Unterstützt plauder die Responses API?',
    en: 'Does plauder support the Responses API?',
    headings: /responses api/i,
  },
  {
    entry: 'images',
    de: 'Kann ich Bilder an plauder schicken?',
    en: 'Can I send images to plauder?',
    headings: /\bimages?\b/i,
  },
  {
    entry: 'console-playground',
    de: 'Gibt es einen Playground in der Konsole?',
    en: 'Is there a playground in the admin console?',
    headings: /playground/i,
  },
  {
    entry: 'token-estimate',
    de: 'Wie zählt plauder Tokens?',
    en: 'How are token counts computed on /v1?',
    headings: /\btokens?\b/i,
  },
  {
    entry: 'session-id-null',
    de: 'Ist sessionId null ein Fehler?',
    en: 'What happens if I send "sessionId": null?',
    headings: /sessionId.*null/i,
  },
  {
    entry: 'encryption-secret',
    de: 'Wozu dient PLAUDER_SECRET?',
    en: 'What is PLAUDER_SECRET for?',
    headings: /encrypt|secret/i,
  },
  {
    entry: 'session-size',
    de: 'Wie groß darf eine Session werden?',
    en: 'How many bytes does a session keep?',
    headings: /session size|truncat/i,
  },
];

/** Sections about the project itself, not about using the service: nobody asks the assistant. */
const NOT_ASKED =
  /performance|layout|runtime dependencies|benchmark|house rules|contributing|licen[cs]e|tests?\b|measure|latest table/i;

const ROOT = new URL('../../../', import.meta.url);
const pages = [
  fileURLToPath(new URL('README.md', ROOT)),
  ...(existsSync(fileURLToPath(new URL('docs/', ROOT)))
    ? readdirSync(fileURLToPath(new URL('docs/', ROOT)))
        .filter((file) => file.endsWith('.md'))
        .map((file) => fileURLToPath(new URL(`docs/${file}`, ROOT)))
    : []),
];

/** `##` and `###` headings outside code blocks. */
function headingsOf(text: string): string[] {
  let code = false;
  const headings: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) code = !code;
    else if (!code && /^#{2,3} /.test(line)) headings.push(line.replace(/^#+ /, '').trim());
  }
  // A page of one topic, without sections: its title is its section.
  const title = text.match(/^# (.+)$/m)?.[1];
  return headings.length === 0 && title !== undefined ? [title.trim()] : headings;
}

const core = createBuiltinCore();
const signal = new AbortController().signal;

describe('the shipped knowledge base covers every documented feature', () => {
  it.each(FEATURES.flatMap((f) => (['de', 'en'] as const).map((l) => [f.entry, l, f] as const)))(
    '[%s] answers in %s',
    async (id, language: Language, feature) => {
      const entry = core.index().entries.find((indexed) => indexed.entry.id === id);
      expect(entry, `no entry [${id}]`).toBeDefined();
      const reply = await core.reply({ language, message: feature[language], history: [], signal });
      const plan = core.index().facts.plans[0];
      const answers = entry?.planBound ? [entry.answer(language, plan)] : [entry?.answer(language)];
      expect(
        answers.some((answer) => answer !== undefined && reply.includes(answer)),
        reply,
      ).toBe(true);
    },
  );

  it.each(pages)('every section of %s is a feature with an entry', (page) => {
    const headings = headingsOf(readFileSync(page, 'utf8'));
    expect(headings.length).toBeGreaterThan(0);
    const uncovered = headings.filter(
      (heading) =>
        !NOT_ASKED.test(heading) && !FEATURES.some((feature) => feature.headings.test(heading)),
    );
    expect(uncovered).toEqual([]);
  });
});

describe('the sample conversations of the documentation', () => {
  /** Messages sent to plauder in the README's and docs' examples, with their language. */
  function samples(): Array<[string, Language]> {
    const found: Array<[string, Language]> = [];
    for (const page of pages) {
      const text = readFileSync(page, 'utf8');
      for (const match of text.matchAll(
        /"message": ?"([^"]+)"|content: '([^']+)'|"content":"([^"]+)"/g,
      )) {
        const message = match[1] ?? match[2] ?? match[3] ?? '';
        // Asked in German on the German door, in English on the English one.
        const language: Language = /\b(hallo|was|kann|wie|ich)\b/i.test(message) ? 'de' : 'en';
        if (!found.some(([m]) => m === message)) found.push([message, language]);
      }
    }
    return found;
  }

  it('finds the samples', () => {
    expect(samples().map(([message]) => message)).toContain('What can plauder do?');
  });

  it.each(samples())('answers "%s" (%s) without "I don\'t know"', async (message, language) => {
    const reply = await core.reply({ language, message, history: [], signal });
    expect(reply).not.toMatch(/don't know|weiß ich leider nicht|full sentence|ganzen Satz/);
    if (/what can plauder do|was kann plauder/i.test(message)) {
      expect(reply).toMatch(language === 'en' ? /self-hosted chat API/ : /selbst gehostete/);
    }
  });
});
