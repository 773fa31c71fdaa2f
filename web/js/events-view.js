/**
 * @module events-view
 * Events (webhooks): the receiver and its state, how many events wait, were delivered or
 * failed, and the latest events with their delivery state, from GET /admin/v1/events.
 */
import { $, h } from './dom.js';
import { currentLanguage, formatNumber, t } from './i18n.js';

export function createEventsView({ api }) {
  let data;

  async function load() {
    data = await api.events();
    render();
  }

  function render() {
    const section = $('#events-section');
    if (!data) return;
    section.hidden = false;
    const { receiver, counts, events } = data;
    $('#events-receiver').textContent =
      receiver === null
        ? t('events.noReceiver')
        : receiver.disabled
          ? t('events.disabled', { url: receiver.url, at: receiver.disabledAt ?? '' })
          : t('events.receiver', { url: receiver.url });
    $('#events-receiver').className = receiver?.disabled ? 'hint warning' : 'hint';
    $('#events-counts').textContent = t('events.counts', {
      pending: formatNumber(counts.pending),
      delivered: formatNumber(counts.delivered),
      failed: formatNumber(counts.failed),
    });
    $('#events-table tbody').replaceChildren(...events.map(row));
    $('#events-empty').hidden = events.length > 0;
  }

  function row(event) {
    const key = event.data?.name ? `${event.data.name} (${event.data.keyId})` : '';
    const last =
      event.lastStatus !== null
        ? `HTTP ${event.lastStatus}`
        : event.lastError !== null
          ? event.lastError
          : '—';
    return h(
      'tr',
      { 'data-event-id': event.id },
      h('td', cell('time'), new Date(event.createdAt).toLocaleString(currentLanguage())),
      h('td', cell('type'), h('code', {}, event.type)),
      h('td', cell('key'), key),
      h(
        'td',
        cell('status'),
        h('span', { class: `badge event-${event.status}` }, t(`events.${event.status}`)),
      ),
      h('td', cell('attempts'), String(event.attempts)),
      h('td', cell('last'), last),
    );
  }

  return { load, render };
}

/** A cell's column heading, shown beside it where the table is laid out as cards. */
const cell = (column) => ({ 'data-label': t(`events.${column}`) });
