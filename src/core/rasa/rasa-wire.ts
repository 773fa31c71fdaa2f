/**
 * @module core/rasa/rasa-wire
 * Rasa's REST channel: `POST /webhooks/rest/webhook` with `{"sender", "message", "metadata"}`,
 * answered with an array of bot messages `{"recipient_id", "text"?, "image"?, "buttons"?,
 * "attachment"?, "custom"?}`. Here: the body we send, and the answer made plain text.
 */

import type { CoreRequest, Language } from '../core-adapter.js';
import type { BodyReading } from '../http/http-upstream.js';

export interface WebhookRequest {
  readonly sender: string;
  readonly message: string;
  /** Rasa hands `metadata` to the bot's channel and actions; one bot learns the language here. */
  readonly metadata: { readonly language: Language };
}

export function buildWebhookRequest(sender: string, request: CoreRequest): WebhookRequest {
  return { sender, message: request.message, metadata: { language: request.language } };
}

export interface RasaAnswer {
  /** One block of plain text per bot message that has something to show, in order. */
  readonly blocks: readonly string[];
  /** How many messages the answer had (0 for `[]`, which Rasa also sends on its own errors). */
  readonly messages: number;
}

const LABELS: Readonly<Record<Language, { image: string; attachment: string }>> = {
  de: { image: 'Bild', attachment: 'Anhang' },
  en: { image: 'Image', attachment: 'Attachment' },
};

/**
 * A message's block is its text, then a note for an image or attachment (`[Image: URL]`), then
 * each button's title on a line of its own (`- Yes`): a client that shows plain text still
 * shows what the bot offered. `custom` payloads are meant for one particular client and have
 * no text; they are left out. A body that is not such an array is unusable, not empty.
 */
export function readRasaAnswer(body: string, language: Language): BodyReading<RasaAnswer> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, problem: 'the answer is not JSON' };
  }
  if (!Array.isArray(json)) return { ok: false, problem: 'the answer is not an array' };
  const blocks: string[] = [];
  for (const [index, message] of json.entries()) {
    const block = describeMessage(message, language);
    if (typeof block === 'object') {
      return { ok: false, problem: `message ${index + 1}: ${block.problem}` };
    }
    if (block !== '') blocks.push(block);
  }
  return { ok: true, value: { blocks, messages: json.length } };
}

/** The message as plain text ('' when it has nothing to show), or what is wrong with it. */
function describeMessage(message: unknown, language: Language): string | { problem: string } {
  if (!isObject(message)) return { problem: 'not an object' };
  const { text, image, attachment, buttons } = message;
  const lines: string[] = [];
  if (text !== undefined && text !== null) {
    if (typeof text !== 'string') return { problem: 'text is not a string' };
    if (text.trim() !== '') lines.push(text.trim());
  }
  if (image !== undefined && image !== null) {
    if (typeof image !== 'string') return { problem: 'image is not a URL string' };
    lines.push(note(LABELS[language].image, image));
  }
  // Rasa passes an attachment on as the bot gave it: a URL, or an object only its client reads.
  if (attachment !== undefined && attachment !== null) {
    lines.push(note(LABELS[language].attachment, typeof attachment === 'string' ? attachment : ''));
  }
  if (buttons !== undefined && buttons !== null) {
    if (!Array.isArray(buttons)) return { problem: 'buttons is not an array' };
    for (const button of buttons) {
      if (!isObject(button)) return { problem: 'a button is not an object' };
      const { title } = button;
      if (title !== undefined && typeof title !== 'string') {
        return { problem: 'a button title is not a string' };
      }
      if (title !== undefined && title.trim() !== '') lines.push(`- ${title.trim()}`);
    }
  }
  return lines.join('\n');
}

function note(label: string, url: string): string {
  return url.trim() === '' ? `[${label}]` : `[${label}: ${url.trim()}]`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
