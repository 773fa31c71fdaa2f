/**
 * @module routes/api/chat/soft-replies
 * The friendly `reply` of each soft error, in the endpoint's language, so that a client
 * that shows only `reply` still shows something sensible.
 */
import type { Language } from '../../../core/core-adapter.js';
import type { SoftErrorCode } from '../../../errors/error-codes.js';

export const SOFT_REPLIES: Readonly<Record<SoftErrorCode, Readonly<Record<Language, string>>>> = {
  plan_inactive: {
    de: 'Dein Zugang ist derzeit nicht aktiv. Bitte wende dich an den Betreiber, um ihn freizuschalten.',
    en: 'Your plan is currently inactive. Please contact the operator to activate it.',
  },
  body_invalid: {
    de: 'Ich konnte die Anfrage nicht lesen. Bitte sende ein JSON-Objekt wie {"message": "Hallo"}.',
    en: 'I could not read the request. Please send a JSON object such as {"message": "Hello"}.',
  },
  message_missing: {
    de: 'Du hast mir keine Nachricht geschickt. Was möchtest du wissen?',
    en: 'You did not send me a message. What would you like to know?',
  },
  message_invalid: {
    de: 'Die Nachricht muss ein Text sein.',
    en: 'The message must be text.',
  },
  message_too_long: {
    de: 'Deine Nachricht ist zu lang. Bitte fasse dich etwas kürzer.',
    en: 'Your message is too long. Please keep it a little shorter.',
  },
  session_id_invalid: {
    de: 'Die Sitzungs-ID ist ungültig. Erlaubt sind 1 bis 128 Zeichen aus A-Z, a-z, 0-9 und . _ : @ -.',
    en: 'The session id is invalid. Use 1 to 128 characters from A-Z, a-z, 0-9 and . _ : @ -.',
  },
};
