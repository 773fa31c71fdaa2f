/**
 * @module playground
 * Sends one chat request with a pasted key, as a client would, and shows the reply, the
 * status and the RateLimit headers. The key is read from the field for this request
 * only: it is never stored. Same-origin fetch can read every response header.
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

export function createPlayground({ onResponse }) {
  const form = $('#playground-form');
  let last;

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const key = $('#pg-key').value.trim();
    const message = $('#pg-message').value;
    if (!key || !message.trim()) {
      announce(t('playground.needKey'), 'error');
      ($('#pg-key').value.trim() ? $('#pg-message') : $('#pg-key')).focus();
      return;
    }
    const sessionId = $('#pg-session').value.trim();
    const endpoint = new FormData(form).get('endpoint');
    const submit = $('[type="submit"]', form);
    submit.disabled = true;
    announce(t('playground.sending'));
    try {
      // Relative to /admin/, so a reverse proxy's path prefix is kept.
      const response = await fetch(new URL(`..${endpoint}`, document.baseURI), {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message, ...(sessionId ? { sessionId } : {}) }),
        cache: 'no-store',
      });
      const body = await response.json().catch(() => undefined);
      last = {
        status: response.status,
        statusText: response.statusText,
        body,
        headers: Object.fromEntries(HEADERS.map((name) => [name, response.headers.get(name)])),
      };
      render();
      announce(t('playground.done', { status: response.status }), response.ok ? 'info' : 'error');
      onResponse?.();
    } catch {
      announce(t('msg.network'), 'error');
    } finally {
      submit.disabled = false;
    }
  });

  function render() {
    if (!last) return;
    $('#pg-result').hidden = false;
    $('#pg-status').textContent = `${last.status} ${last.statusText}`.trim();
    $('#pg-reply').textContent = last.body?.reply ?? '—';
    const error = last.body?.error;
    $('#pg-error').textContent = error ? `${error.code}: ${error.message}` : '—';
    $('#pg-headers').replaceChildren(
      ...HEADERS.flatMap((name) => {
        const value = last.headers[name];
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
