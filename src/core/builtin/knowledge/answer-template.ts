/**
 * @module core/builtin/knowledge/answer-template
 * Placeholders in answers, filled from the running configuration (`ServiceFacts`) when
 * the knowledge base is indexed, so the assistant never contradicts the service it runs
 * in. `{plan}` and `{plan-limit}` name the plan the question is about (from the message or
 * the conversation); an answer that uses them is given only when a plan is known.
 */
import type { Language } from '../../core-adapter.js';
import type { PlanFacts, ServiceFacts } from '../service-facts.js';

const PLACEHOLDERS = [
  'plans',
  'plan-count',
  'plan',
  'plan-limit',
  'other-plans',
  'per-minute',
  'timezone',
  'session-ttl',
  'session-window',
  'message-max-chars',
  'idempotency-ttl',
  'key-concurrency',
] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];
/** Placeholders that need the plan of the question. */
const PLAN_BOUND: ReadonlySet<string> = new Set(['plan', 'plan-limit', 'other-plans']);
const PATTERN = /\{([a-z-]+)\}/g;

/** A placeholder, or `{` `}` around anything else (reported when the file is checked). */
export function placeholdersIn(text: string): string[] {
  return [...text.matchAll(PATTERN)].flatMap((match) => (match[1] === undefined ? [] : [match[1]]));
}

export function isPlaceholder(name: string): name is Placeholder {
  return (PLACEHOLDERS as readonly string[]).includes(name);
}

export function needsPlan(text: string): boolean {
  return placeholdersIn(text).some((name) => PLAN_BOUND.has(name));
}

const NUMBER_WORDS: Readonly<Record<Language, readonly string[]>> = {
  de: ['null', 'ein', 'zwei', 'drei', 'vier', 'fünf', 'sechs', 'sieben', 'acht', 'neun', 'zehn'],
  en: ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'],
};
const PER_MONTH: Readonly<Record<Language, string>> = {
  de: 'Anfragen pro Monat',
  en: 'requests per month',
};

function displayPlan(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

function list(items: readonly string[], language: Language): string {
  const and = language === 'de' ? 'und' : 'and';
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} ${and} ${items.at(-1)}`;
}

function duration(ms: number, language: Language): string {
  const units: ReadonlyArray<readonly [number, string, string, string, string]> = [
    [86_400_000, 'Tag', 'Tage', 'day', 'days'],
    [3_600_000, 'Stunde', 'Stunden', 'hour', 'hours'],
    [60_000, 'Minute', 'Minuten', 'minute', 'minutes'],
    [1000, 'Sekunde', 'Sekunden', 'second', 'seconds'],
  ];
  for (const [size, deOne, deMany, enOne, enMany] of units) {
    if (ms % size === 0) {
      const n = ms / size;
      const unit = language === 'de' ? (n === 1 ? deOne : deMany) : n === 1 ? enOne : enMany;
      return `${n} ${unit}`;
    }
  }
  return language === 'de' ? `${ms} Millisekunden` : `${ms} milliseconds`;
}

function perMinute(facts: ServiceFacts, language: Language): string {
  const limited = facts.plans.filter((plan) => plan.perMinute !== undefined);
  if (limited.length === 0) {
    return language === 'de'
      ? 'Ein Limit pro Minute gibt es nicht; gezählt wird nur pro Kalendermonat.'
      : 'There is no per-minute limit; requests are only counted per calendar month.';
  }
  const items = limited.map((plan) => `${displayPlan(plan.name)} ${plan.perMinute}`);
  return language === 'de'
    ? `Pro Minute erlaubt sind höchstens: ${list(items, language)} Anfragen.`
    : `At most these many requests per minute are allowed: ${list(items, language)}.`;
}

function plansText(plans: readonly PlanFacts[], language: Language): string {
  const with_ = language === 'de' ? 'mit' : 'with';
  return list(
    plans.map(
      (plan) => `${displayPlan(plan.name)} ${with_} ${plan.monthly} ${PER_MONTH[language]}`,
    ),
    language,
  );
}

function value(
  name: Placeholder,
  facts: ServiceFacts,
  language: Language,
  plan: PlanFacts | undefined,
): string {
  switch (name) {
    case 'plans':
      return plansText(facts.plans, language);
    case 'plan-count':
      return NUMBER_WORDS[language][facts.plans.length] ?? String(facts.plans.length);
    case 'plan':
      return displayPlan(plan?.name ?? '');
    case 'plan-limit':
      return String(plan?.monthly ?? '');
    case 'other-plans': {
      const others = facts.plans.filter((other) => other.name !== plan?.name);
      if (others.length === 0) return '';
      return language === 'de'
        ? `Zum Vergleich: ${plansText(others, language)}.`
        : `For comparison: ${plansText(others, language)}.`;
    }
    case 'per-minute':
      return perMinute(facts, language);
    case 'timezone':
      return facts.quotaTimeZone;
    case 'session-ttl':
      return duration(facts.sessionTtlMs, language);
    case 'session-window':
      return String(facts.sessionWindow);
    case 'message-max-chars':
      return String(facts.messageMaxChars);
    case 'idempotency-ttl':
      return duration(facts.idempotencyTtlMs, language);
    case 'key-concurrency':
      return String(facts.keyConcurrency);
  }
}

/** Fills the placeholders of `text`; unknown ones stay as written (the check reports them). */
export function renderAnswer(
  text: string,
  facts: ServiceFacts,
  language: Language,
  plan?: PlanFacts,
): string {
  return text
    .replace(PATTERN, (whole, name: string) =>
      isPlaceholder(name) ? value(name, facts, language, plan) : whole,
    )
    .replace(/ {2,}/g, ' ')
    .trim();
}
