/**
 * @module i18n
 * The console's German and English text. Static text in index.html carries
 * `data-i18n="key"` (and `data-i18n-aria-label`); scripts call `t(key, values)`.
 */

const TEXT = {
  en: {
    title: 'plauder console',
    skip: 'Skip to content',
    'brand.console': 'console',
    'nav.label': 'Console',
    language: 'Language',
    'nav.docs': 'API docs',
    signOut: 'Sign out',
    'signIn.heading': 'Sign in',
    'signIn.token': 'Admin token',
    'signIn.hint':
      'The value of PLAUDER_ADMIN_TOKEN. It is kept only in this browser tab until you sign out.',
    'signIn.submit': 'Sign in',
    'console.heading': 'Console',
    'keys.heading': 'Keys',
    'keys.new': 'New key',
    'keys.caption': "API keys and this month's usage",
    'keys.name': 'Name',
    'keys.id': 'ID',
    'keys.prefix': 'Key prefix',
    'keys.plan': 'Plan',
    'keys.status': 'Status',
    'keys.usage': 'Usage this month',
    'keys.actions': 'Actions',
    'keys.empty': 'No keys yet. Create the first one with "New key".',
    'keys.summary': 'Requests in {month}: {total} (time zone {timeZone}).',
    'status.active': 'active',
    'status.inactive': 'inactive',
    'status.revoked': 'revoked',
    'action.edit': 'Change',
    'action.activate': 'Activate',
    'action.deactivate': 'Deactivate',
    'action.rotate': 'Rotate',
    'action.revoke': 'Revoke',
    'action.chart': 'Chart',
    'action.label': '{action}: {name}',
    'usage.text': '{used} / {limit}',
    'usage.aria': '{used} of {limit} requests used by {name}',
    'usage.noLimit': '{used} (plan not configured)',
    'usage.minute': 'this minute: {used} / {limit}',
    'usage.tokens': 'tokens: {used} / {limit}',
    'usage.tokensNoLimit': 'tokens: {used}',
    'plan.month': '{limit} / month',
    'plan.minute': '{limit} / minute',
    'events.heading': 'Events (webhooks)',
    'events.refresh': 'Refresh',
    'events.caption': 'The latest events and their delivery',
    'events.time': 'Time',
    'events.type': 'Event',
    'events.key': 'Key',
    'events.status': 'Delivery',
    'events.attempts': 'Attempts',
    'events.last': 'Last answer',
    'events.empty': 'No events yet.',
    'events.noReceiver': 'No receiver configured (PLAUDER_WEBHOOK_URL): no events are recorded.',
    'events.receiver': 'Sent to {url}.',
    'events.disabled':
      'Receiver {url} answered 410 Gone at {at}: nothing is sent until `plauder webhooks enable`.',
    'events.counts': 'Waiting: {pending} · delivered: {delivered} · failed: {failed}',
    'events.pending': 'waiting',
    'events.delivered': 'delivered',
    'events.failed': 'failed',
    'chart.heading': 'Key details and usage',
    'playground.model': 'Model (the language of the reply)',
    'chart.key': 'Key',
    'chart.title': 'Requests per month: {name}',
    'chart.desc': 'Bar chart. {values}.',
    'chart.limit': 'limit {limit}',
    'chart.current':
      'This month so far (day {day} of {days}): {used} requests, {average} per day on average.',
    'chart.limitLine':
      "Dashed line: the plan's monthly limit of {limit} requests, {perDay} per day on average.",
    'chart.noLimit': 'The plan of this key is not configured: there is no limit to show.',
    'chart.none': 'Choose a key by its name in the list to see its details and usage.',
    'action.open': 'Details',
    'filter.search': 'Search (name, ID, key prefix)',
    'filter.all': 'all',
    'filter.active': 'active',
    'filter.inactive': 'inactive or revoked',
    'filter.sort': 'Order',
    'sort.created': 'oldest first',
    'sort.-created': 'newest first',
    'sort.name': 'name A–Z',
    'sort.-name': 'name Z–A',
    'pager.label': 'Pages of keys',
    'pager.prev': 'Previous',
    'pager.next': 'Next',
    'pager.range': '{from}–{to} of {total}',
    'keys.noMatch': 'No key matches the search and filters.',
    'door.chat': '/api/chat (German)',
    'door.chatEn': '/api/chat-en (English)',
    'door.completions': '/v1/chat/completions (OpenAI Chat Completions)',
    'door.responses': '/v1/responses (OpenAI Responses)',
    'door.messages': '/v1/messages (Anthropic Messages)',
    'playground.doorHint':
      "The same turn through each door, in that door's own format; the session id is for /api/chat only.",
    'days.heading': 'This month, per day',
    'days.title': 'Requests per day this month: {name}',
    'days.caption':
      'Today ({date}): {used} requests; the busiest day so far: {max}. Days in the quota time zone.',
    'playground.heading': 'Playground',
    'playground.hint':
      "Sends one real chat request, which counts against the key's quota; the reply is streamed as it is written. The key is used only for this request and not stored.",
    'playground.endpoint': 'Endpoint',
    'playground.german': '(German)',
    'playground.english': '(English)',
    'playground.key': 'API key',
    'playground.session': 'Session id (optional)',
    'playground.sessionHint':
      'Requests with the same session id form one conversation with memory.',
    'playground.message': 'Message',
    'playground.send': 'Send',
    'playground.response': 'Response',
    'playground.status': 'HTTP status',
    'playground.reply': 'Reply',
    'playground.error': 'Error',
    'playground.headers': 'Rate limit headers',
    'playground.notSent': '(not sent)',
    'playground.sending': 'Sending the request…',
    'playground.done': 'Response received: HTTP {status}.',
    'playground.needKey': 'Paste an API key and write a message first.',
    'create.heading': 'New key',
    'create.name': 'Name',
    'create.plan': 'Plan',
    'create.active': 'Plan active',
    'create.submit': 'Create key',
    'edit.heading': 'Change key',
    save: 'Save',
    cancel: 'Cancel',
    'rotate.heading': 'Rotate key',
    'rotate.text':
      'A new secret for "{name}" ({id}). Id, plan, usage and sessions stay with the key.',
    'rotate.grace': 'The old key stays valid for',
    'rotate.none': 'no time (refused at once)',
    'rotate.hour': '1 hour',
    'rotate.day': '24 hours',
    'rotate.week': '7 days',
    'rotate.submit': 'Rotate',
    'revoke.heading': 'Revoke key?',
    'revoke.text':
      'Every secret of "{name}" ({id}) is refused from its next request on. This cannot be undone.',
    'revoke.submit': 'Revoke key',
    'secret.heading': 'Your new key',
    'secret.warning': 'Copy the key now and store it like a password. It will not be shown again.',
    'secret.label': 'Key',
    'secret.copy': 'Copy',
    'secret.done': 'Done',
    'secret.copied': 'Copied to the clipboard.',
    'secret.copyFailed': 'Copying failed: select the key and copy it by hand.',
    'msg.signedIn': 'Signed in.',
    'msg.signedOut': 'Signed out.',
    'msg.needToken': 'Enter the admin token.',
    'msg.wrongToken': 'The admin token is wrong.',
    'msg.expired': 'The admin token is no longer accepted. Please sign in again.',
    'msg.created': 'Key "{name}" created.',
    'msg.updated': 'Key "{name}" saved.',
    'msg.activated': 'Key "{name}" activated.',
    'msg.deactivated': 'Key "{name}" deactivated.',
    'msg.rotated': 'Key "{name}" rotated.',
    'msg.revoked': 'Key "{name}" revoked.',
    'msg.failed': 'That did not work: {message}',
    'msg.network': 'The service did not answer.',
    'err.name_invalid': 'The name must be 1 to 100 printable characters.',
    'err.plan_unknown': 'This plan is not configured.',
    'err.key_not_found': 'This key no longer exists.',
    'err.key_revoked': 'This key is revoked and can no longer be changed.',
    'err.grace_invalid': 'The grace period is not a valid duration.',
  },
  de: {
    title: 'plauder-Konsole',
    skip: 'Zum Inhalt springen',
    'brand.console': 'Konsole',
    'nav.label': 'Konsole',
    language: 'Sprache',
    'nav.docs': 'API-Dokumentation',
    signOut: 'Abmelden',
    'signIn.heading': 'Anmelden',
    'signIn.token': 'Admin-Token',
    'signIn.hint':
      'Der Wert von PLAUDER_ADMIN_TOKEN. Er bleibt nur in diesem Browser-Tab gespeichert, bis du dich abmeldest.',
    'signIn.submit': 'Anmelden',
    'console.heading': 'Konsole',
    'keys.heading': 'Schlüssel',
    'keys.new': 'Neuer Schlüssel',
    'keys.caption': 'API-Schlüssel und ihre Nutzung in diesem Monat',
    'keys.name': 'Name',
    'keys.id': 'ID',
    'keys.prefix': 'Präfix',
    'keys.plan': 'Tarif',
    'keys.status': 'Status',
    'keys.usage': 'Nutzung diesen Monat',
    'keys.actions': 'Aktionen',
    'keys.empty': 'Noch keine Schlüssel. Lege den ersten mit „Neuer Schlüssel“ an.',
    'keys.summary': 'Anfragen im Monat {month}: {total} (Zeitzone {timeZone}).',
    'status.active': 'aktiv',
    'status.inactive': 'inaktiv',
    'status.revoked': 'widerrufen',
    'action.edit': 'Ändern',
    'action.activate': 'Aktivieren',
    'action.deactivate': 'Deaktivieren',
    'action.rotate': 'Rotieren',
    'action.revoke': 'Widerrufen',
    'action.chart': 'Diagramm',
    'action.label': '{action}: {name}',
    'usage.text': '{used} / {limit}',
    'usage.aria': '{used} von {limit} Anfragen genutzt von {name}',
    'usage.noLimit': '{used} (Tarif nicht konfiguriert)',
    'usage.minute': 'diese Minute: {used} / {limit}',
    'usage.tokens': 'Tokens: {used} / {limit}',
    'usage.tokensNoLimit': 'Tokens: {used}',
    'plan.month': '{limit} / Monat',
    'plan.minute': '{limit} / Minute',
    'events.heading': 'Ereignisse (Webhooks)',
    'events.refresh': 'Aktualisieren',
    'events.caption': 'Die letzten Ereignisse und ihre Zustellung',
    'events.time': 'Zeit',
    'events.type': 'Ereignis',
    'events.key': 'Schlüssel',
    'events.status': 'Zustellung',
    'events.attempts': 'Versuche',
    'events.last': 'Letzte Antwort',
    'events.empty': 'Noch keine Ereignisse.',
    'events.noReceiver':
      'Kein Empfänger eingerichtet (PLAUDER_WEBHOOK_URL): es werden keine Ereignisse aufgezeichnet.',
    'events.receiver': 'Gesendet an {url}.',
    'events.disabled':
      'Der Empfänger {url} antwortete am {at} mit 410 Gone: nichts wird gesendet bis `plauder webhooks enable`.',
    'events.counts': 'Wartend: {pending} · zugestellt: {delivered} · gescheitert: {failed}',
    'events.pending': 'wartend',
    'events.delivered': 'zugestellt',
    'events.failed': 'gescheitert',
    'chart.heading': 'Schlüssel: Details und Nutzung',
    'playground.model': 'Modell (die Sprache der Antwort)',
    'chart.key': 'Schlüssel',
    'chart.title': 'Anfragen pro Monat: {name}',
    'chart.desc': 'Balkendiagramm. {values}.',
    'chart.limit': 'Limit {limit}',
    'chart.current':
      'Dieser Monat bis heute (Tag {day} von {days}): {used} Anfragen, im Schnitt {average} pro Tag.',
    'chart.limitLine':
      'Gestrichelte Linie: das Monatslimit des Tarifs, {limit} Anfragen, im Schnitt {perDay} pro Tag.',
    'chart.noLimit':
      'Der Tarif dieses Schlüssels ist nicht konfiguriert: es gibt kein Limit zu zeigen.',
    'chart.none':
      'Wähle einen Schlüssel über seinen Namen in der Liste, um Details und Nutzung zu sehen.',
    'action.open': 'Details',
    'filter.search': 'Suche (Name, ID, Präfix)',
    'filter.all': 'alle',
    'filter.active': 'aktiv',
    'filter.inactive': 'inaktiv oder widerrufen',
    'filter.sort': 'Reihenfolge',
    'sort.created': 'älteste zuerst',
    'sort.-created': 'neueste zuerst',
    'sort.name': 'Name A–Z',
    'sort.-name': 'Name Z–A',
    'pager.label': 'Seiten der Schlüssel',
    'pager.prev': 'Zurück',
    'pager.next': 'Weiter',
    'pager.range': '{from}–{to} von {total}',
    'keys.noMatch': 'Kein Schlüssel passt zu Suche und Filtern.',
    'door.chat': '/api/chat (Deutsch)',
    'door.chatEn': '/api/chat-en (Englisch)',
    'door.completions': '/v1/chat/completions (OpenAI Chat Completions)',
    'door.responses': '/v1/responses (OpenAI Responses)',
    'door.messages': '/v1/messages (Anthropic Messages)',
    'playground.doorHint':
      'Derselbe Gesprächsschritt durch jede Tür, in deren eigenem Format; die Sitzungs-ID gilt nur für /api/chat.',
    'days.heading': 'Dieser Monat, pro Tag',
    'days.title': 'Anfragen pro Tag in diesem Monat: {name}',
    'days.caption':
      'Heute ({date}): {used} Anfragen; der bisher stärkste Tag: {max}. Tage in der Zeitzone des Kontingents.',
    'playground.heading': 'Testkonsole',
    'playground.hint':
      'Sendet eine echte Chat-Anfrage, die auf das Kontingent des Schlüssels zählt; die Antwort erscheint, während sie geschrieben wird. Der Schlüssel wird nur für diese Anfrage verwendet und nicht gespeichert.',
    'playground.endpoint': 'Endpunkt',
    'playground.german': '(Deutsch)',
    'playground.english': '(Englisch)',
    'playground.key': 'API-Schlüssel',
    'playground.session': 'Sitzungs-ID (optional)',
    'playground.sessionHint':
      'Anfragen mit derselben Sitzungs-ID bilden ein Gespräch mit Gedächtnis.',
    'playground.message': 'Nachricht',
    'playground.send': 'Senden',
    'playground.response': 'Antwort',
    'playground.status': 'HTTP-Status',
    'playground.reply': 'Antworttext',
    'playground.error': 'Fehler',
    'playground.headers': 'Ratenlimit-Header',
    'playground.notSent': '(nicht gesendet)',
    'playground.sending': 'Die Anfrage wird gesendet …',
    'playground.done': 'Antwort erhalten: HTTP {status}.',
    'playground.needKey': 'Füge zuerst einen API-Schlüssel ein und schreibe eine Nachricht.',
    'create.heading': 'Neuer Schlüssel',
    'create.name': 'Name',
    'create.plan': 'Tarif',
    'create.active': 'Tarif aktiv',
    'create.submit': 'Schlüssel anlegen',
    'edit.heading': 'Schlüssel ändern',
    save: 'Speichern',
    cancel: 'Abbrechen',
    'rotate.heading': 'Schlüssel rotieren',
    'rotate.text':
      'Ein neues Geheimnis für „{name}“ ({id}). ID, Tarif, Nutzung und Sitzungen bleiben beim Schlüssel.',
    'rotate.grace': 'Der alte Schlüssel bleibt gültig für',
    'rotate.none': 'keine Zeit (sofort abgelehnt)',
    'rotate.hour': '1 Stunde',
    'rotate.day': '24 Stunden',
    'rotate.week': '7 Tage',
    'rotate.submit': 'Rotieren',
    'revoke.heading': 'Schlüssel widerrufen?',
    'revoke.text':
      'Jedes Geheimnis von „{name}“ ({id}) wird ab der nächsten Anfrage abgelehnt. Das lässt sich nicht rückgängig machen.',
    'revoke.submit': 'Schlüssel widerrufen',
    'secret.heading': 'Dein neuer Schlüssel',
    'secret.warning':
      'Kopiere den Schlüssel jetzt und bewahre ihn wie ein Passwort auf. Er wird nicht noch einmal angezeigt.',
    'secret.label': 'Schlüssel',
    'secret.copy': 'Kopieren',
    'secret.done': 'Fertig',
    'secret.copied': 'In die Zwischenablage kopiert.',
    'secret.copyFailed':
      'Kopieren fehlgeschlagen: Markiere den Schlüssel und kopiere ihn von Hand.',
    'msg.signedIn': 'Angemeldet.',
    'msg.signedOut': 'Abgemeldet.',
    'msg.needToken': 'Gib das Admin-Token ein.',
    'msg.wrongToken': 'Das Admin-Token ist falsch.',
    'msg.expired': 'Das Admin-Token wird nicht mehr angenommen. Bitte melde dich neu an.',
    'msg.created': 'Schlüssel „{name}“ angelegt.',
    'msg.updated': 'Schlüssel „{name}“ gespeichert.',
    'msg.activated': 'Schlüssel „{name}“ aktiviert.',
    'msg.deactivated': 'Schlüssel „{name}“ deaktiviert.',
    'msg.rotated': 'Schlüssel „{name}“ rotiert.',
    'msg.revoked': 'Schlüssel „{name}“ widerrufen.',
    'msg.failed': 'Das hat nicht geklappt: {message}',
    'msg.network': 'Der Dienst hat nicht geantwortet.',
    'err.name_invalid': 'Der Name muss 1 bis 100 druckbare Zeichen lang sein.',
    'err.plan_unknown': 'Dieser Tarif ist nicht konfiguriert.',
    'err.key_not_found': 'Diesen Schlüssel gibt es nicht mehr.',
    'err.key_revoked': 'Dieser Schlüssel ist widerrufen und kann nicht mehr geändert werden.',
    'err.grace_invalid': 'Die Übergangszeit ist keine gültige Dauer.',
  },
};

export const LANGUAGES = Object.keys(TEXT);
const STORAGE_KEY = 'plauder.language';
let language = initialLanguage();

function initialLanguage() {
  const chosen = localStorage.getItem(STORAGE_KEY);
  if (chosen && LANGUAGES.includes(chosen)) return chosen;
  return (navigator.language || 'en').toLowerCase().startsWith('de') ? 'de' : 'en';
}

export function currentLanguage() {
  return language;
}

/** The language choice is not a secret, so unlike the token it outlives the tab. */
export function setLanguage(next) {
  if (!LANGUAGES.includes(next)) return;
  language = next;
  localStorage.setItem(STORAGE_KEY, next);
}

export function t(key, values = {}) {
  const template = TEXT[language][key] ?? TEXT.en[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ''));
}

export function hasText(key) {
  return key in TEXT.en;
}

export function formatNumber(value) {
  return new Intl.NumberFormat(language).format(value);
}

/** Translates the static text of the page. */
export function translatePage(root = document) {
  document.documentElement.lang = language;
  document.title = t('title');
  for (const element of /** @type {NodeListOf<HTMLElement>} */ (
    root.querySelectorAll('[data-i18n]')
  )) {
    element.textContent = t(element.dataset.i18n);
  }
  for (const element of /** @type {NodeListOf<HTMLElement>} */ (
    root.querySelectorAll('[data-i18n-aria-label]')
  )) {
    element.setAttribute('aria-label', t(element.dataset.i18nAriaLabel));
  }
}
