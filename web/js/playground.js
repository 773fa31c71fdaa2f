/**
 * @module playground
 * Sends one chat request with a pasted key, as a client would, through the door chosen
 * (`/api/chat`, `/api/chat-en`, or the OpenAI and Anthropic doors of `/v1`, each in its own
 * wire format: `DOORS`), and shows the reply, the status and the RateLimit headers. The reply is asked for as a stream of events
 * (`Accept: text/event-stream`) and shown as its pieces arrive; a refusal comes as JSON, as
 * for any client. The key is read from the field for this request only: it is never
 * stored. Same-origin fetch can read every response header.
 */
import { $, h } from './dom.js';
import { t } from './i18n.js';
import { announce } from './status.js';

const HEADERS = [
  'RateLimit',
  'RateLimit-Policy',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
];

/**
 * Each door: its request body, and how its stream's events and its JSON answers carry the
 * reply and the error (docs/api.md, docs/openai.md, docs/anthropic.md).
 */
const PLAIN_DOOR = {
  body: (message, sessionId) => ({ message, ...(sessionId ? { sessionId } : {}) }),
  onEvent: (shown, event, data) => {
    if (event === 'delta') shown.reply += data.text;
    else if (event === 'done') shown.reply = data.reply;
    else if (event === 'error') shown.error = data.error;
  },
  fromJson: (json) => ({ reply: json?.reply, error: json?.error }),
};
const openAiError = (error) => error && { code: error.code ?? error.type, message: error.message };
const DOORS = {
  '/api/chat': PLAIN_DOOR,
  '/api/chat-en': PLAIN_DOOR,
  '/v1/chat/completions': {
    body: (message, _sessionId, model) => ({
      model,
      stream: true,
      messages: [{ role: 'user', content: message }],
    }),
    onEvent: (shown, _event, data) => {
      const piece = data.choices?.[0]?.delta?.content;
      if (typeof piece === 'string') shown.reply += piece;
      if (data.error) shown.error = openAiError(data.error);
    },
    fromJson: (json) => ({
      reply: json?.choices?.[0]?.message?.content,
      error: openAiError(json?.error),
    }),
  },
  '/v1/responses': {
    body: (message, _sessionId, model) => ({ model, stream: true, input: message }),
    onEvent: (shown, event, data) => {
      if (event === 'response.output_text.delta') shown.reply += data.delta;
      else if (event === 'error') shown.error = openAiError(data.error ?? data);
      else if (event === 'response.failed') shown.error = openAiError(data.response?.error);
    },
    fromJson: (json) => ({ reply: json?.output_text, error: openAiError(json?.error) }),
  },
  '/v1/messages': {
    body: (message, _sessionId, model) => ({
      model,
      max_tokens: 1024,
      stream: true,
      messages: [{ role: 'user', content: message }],
    }),
    onEvent: (shown, event, data) => {
      if (event === 'content_block_delta' && data.delta?.type === 'text_delta')
        shown.reply += data.delta.text;
      else if (event === 'error') shown.error = openAiError(data.error);
    },
    fromJson: (json) => ({
      reply: json?.content?.map((block) => block.text ?? '').join(''),
      error: openAiError(json?.error),
    }),
  },
};

export function createPlayground({ onResponse }) {
  const doorChoice = $('#pg-door');
  const showModel = () => {
    $('#pg-model-field').hidden = !doorChoice.value.startsWith('/v1/');
  };
  doorChoice.addEventListener('change', showModel);
  showModel();

  const form = $('#playground-form');
  /** @type {{ status: number, statusText: string, body: any, headers: Record<string, string | null> } | undefined} */
  let last;

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const key = $('#pg-key').value.trim();
    const message = $('#pg-message').value;
    if (!key || !message.trim()) {
      announce(() => t('playground.needKey'), 'error');
      ($('#pg-key').value.trim() ? $('#pg-message') : $('#pg-key')).focus();
      return;
    }
    const sessionId = $('#pg-session').value.trim();
    const endpoint = doorChoice.value;
    const door = DOORS[endpoint] ?? PLAIN_DOOR;
    const submit = $('[type="submit"]', form);
    submit.disabled = true;
    announce(() => t('playground.sending'));
    try {
      // Relative to /admin/, so a reverse proxy's path prefix is kept.
      const response = await fetch(new URL(`..${endpoint}`, document.baseURI), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'text/event-stream, application/json',
        },
        body: JSON.stringify(door.body(message, sessionId, $('#pg-model').value)),
        cache: 'no-store',
      });
      last = {
        status: response.status,
        statusText: response.statusText,
        body: undefined,
        headers: Object.fromEntries(HEADERS.map((name) => [name, response.headers.get(name)])),
      };
      const shown = last;
      if (isEventStream(response)) {
        shown.body = { reply: '' };
        await readEvents(response, (event, data) => {
          door.onEvent(shown.body, event, data);
          render();
        });
      } else {
        last.body = door.fromJson(await response.json().catch(() => undefined));
      }
      render();
      announce(
        () => t('playground.done', { status: response.status }),
        response.ok ? 'info' : 'error',
      );
      onResponse?.();
    } catch {
      announce(() => t('msg.network'), 'error');
    } finally {
      submit.disabled = false;
    }
  });

  function render() {
    const result = last;
    if (!result) return;
    $('#pg-result').hidden = false;
    $('#pg-status').textContent = `${result.status} ${result.statusText}`.trim();
    $('#pg-reply').textContent = result.body?.reply ?? '—';
    const error = result.body?.error;
    $('#pg-error').textContent = error ? `${error.code}: ${error.message}` : '—';
    $('#pg-headers').replaceChildren(
      ...HEADERS.flatMap((name) => {
        const value = result.headers[name];
        let shown = value ?? t('playground.notSent');
        if (name === 'X-RateLimit-Reset' && value) {
          shown = `${value} (${new Date(Number(value) * 1000).toISOString()})`;
        }
        return [h('dt', {}, name), h('dd', { 'data-header': name.toLowerCase() }, shown)];
      }),
    );
  }

  return { render };
}

function isEventStream(response) {
  return (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
}

/**
 * Reads Server-Sent Events as they arrive and calls `onEvent(name, data)` for each event
 * with JSON data; comments (`: ping`) are skipped.
 */
async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, '\n');
    let end = buffer.indexOf('\n\n');
    while (end !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      dispatch(block, onEvent);
      end = buffer.indexOf('\n\n');
    }
  }
}

function dispatch(block, onEvent) {
  let name = 'message';
  const data = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') name = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return;
  try {
    onEvent(name, JSON.parse(data.join('\n')));
  } catch {
    // Not JSON: not one of ours.
  }
}
