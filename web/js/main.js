/**
 * @module main
 * The console's start: language, sign-in with the admin token, and the parts (keys,
 * events, usage chart, playground). The token lives in sessionStorage only: it is gone
 * when the tab closes or on "Sign out", and no other page or tab can read it.
 */
import { ApiProblem, createAdminApi } from './admin-api.js';
import { dateLabel, dayChart } from './day-chart.js';
import { $, h } from './dom.js';
import { createEventsView } from './events-view.js';
import { currentLanguage, formatNumber, hasText, setLanguage, t, translatePage } from './i18n.js';
import { createKeysView } from './keys-view.js';
import { createPlayground } from './playground.js';
import { announce, clearStatus, translateStatus } from './status.js';
import { usageChart } from './usage-chart.js';

const TOKEN_KEY = 'plauder.adminToken';

const api = createAdminApi(
  () => sessionStorage.getItem(TOKEN_KEY) ?? '',
  () => signOut(() => t('msg.expired'), 'error'),
);

function describeError(error) {
  if (!(error instanceof ApiProblem)) return String(error?.message ?? error);
  if (error.code === 'network') return t('msg.network');
  return hasText(`err.${error.code}`) ? t(`err.${error.code}`) : error.message;
}

const keysView = createKeysView({
  api,
  describeError,
  onOpen: (key) => void openDetail(key, true),
  onChanged: (key) => {
    if (shownKey?.id === key.id) void openDetail(key, false);
    void refreshEvents();
  },
  onLoaded: () => {
    // A key change or a request may have recorded an event.
    void refreshEvents();
  },
});
const playground = createPlayground({ onResponse: () => void refreshKeys() });
const eventsView = createEventsView({ api });

/** The key whose details are shown, and its history (drawn again on resize or language change). */
let shownKey;
let shownChart;

/** One key's details: what it is, its actions, its last 12 months and this month's days. */
async function openDetail(key, focus) {
  if (shownKey?.id !== key.id) {
    shownChart = undefined;
    $('#chart').replaceChildren();
    $('#day-chart').replaceChildren();
    $('#days-heading').hidden = true;
  }
  shownKey = key;
  renderDetail();
  if (focus) {
    $('#chart-heading').setAttribute('tabindex', '-1');
    $('#chart-heading').focus();
  }
  try {
    const history = await api.keyHistory(key.id);
    if (shownKey?.id !== key.id) return;
    shownChart = { name: key.name, history };
    drawChart();
  } catch (error) {
    announce(() => describeError(error), 'error');
  }
}

function renderDetail() {
  const detail = $('#key-detail');
  if (!shownKey) {
    detail.replaceChildren(h('p', { class: 'hint' }, t('chart.none')));
    return;
  }
  const key = shownKey;
  const pair = (label, ...value) => [h('dt', {}, label), h('dd', {}, ...value)];
  detail.replaceChildren(
    h('h3', { class: 'detail-name' }, key.name),
    h(
      'dl',
      { class: 'pairs' },
      ...pair(t('keys.id'), h('code', {}, key.id)),
      ...pair(t('keys.prefix'), h('code', {}, `${key.displayPrefix}…`)),
      ...pair(t('keys.plan'), key.plan),
      ...pair(t('keys.status'), t(`status.${key.status}`)),
    ),
    h(
      'div',
      { class: 'actions' },
      ...keysView.actions(key).map(([action, label, run, extra]) =>
        h(
          'button',
          {
            type: 'button',
            class: extra?.includes('danger') ? 'danger small' : 'secondary small',
            'data-detail-action': action,
            onclick: run,
          },
          label,
        ),
      ),
    ),
  );
}

function drawChart() {
  if (!shownChart) return;
  const figure = $('#chart');
  const { name, history } = shownChart;
  const width = Math.max(240, Math.min(768, Math.floor(figure.clientWidth || 640)));
  figure.replaceChildren(
    usageChart({ name, limit: history.limit, months: history.months }, width),
    h('figcaption', { class: 'hint' }, ...chartCaption(history)),
  );
  figure.dataset.width = String(width);
  $('#days-heading').hidden = false;
  $('#day-chart').replaceChildren(
    dayChart({ name, days: history.days, daysInMonth: history.currentMonth.days }, width),
    h('figcaption', { class: 'hint' }, dayCaption(history.days)),
  );
}

/** Today's count and the busiest day so far, in words (the chart has no value labels). */
function dayCaption(days) {
  const today = days.at(-1) ?? { date: '', used: 0 };
  const max = Math.max(0, ...days.map((d) => d.used));
  return h(
    'span',
    { class: 'caption-line', 'data-caption': 'days' },
    t('days.caption', {
      date: today.date ? dateLabel(today.date) : '',
      used: formatNumber(today.used),
      max: formatNumber(max),
    }),
  );
}

/**
 * The current month in words: its requests, the day of the month, the daily average so far
 * and the average per day the limit allows (the days themselves are in the day chart).
 */
function chartCaption(history) {
  const used = history.months.at(-1)?.used ?? 0;
  const { day, days } = history.currentMonth;
  const average = (count, n) =>
    new Intl.NumberFormat(currentLanguage(), { maximumFractionDigits: 1 }).format(count / n);
  const lines = [
    t('chart.current', {
      used: formatNumber(used),
      day,
      days,
      average: average(used, day),
    }),
    history.limit === null
      ? t('chart.noLimit')
      : t('chart.limitLine', {
          limit: formatNumber(history.limit),
          perDay: average(history.limit, days),
        }),
  ];
  return lines.map((line, i) => h('span', { class: 'caption-line', 'data-caption': i }, line));
}

async function refreshEvents() {
  try {
    await eventsView.load();
  } catch (error) {
    announce(() => describeError(error), 'error');
  }
}

async function refreshKeys() {
  try {
    await keysView.load();
  } catch (error) {
    announce(() => describeError(error), 'error');
  }
}

async function enterConsole() {
  $('#sign-in-view').hidden = true;
  $('#console-view').hidden = false;
  $('#sign-out').hidden = false;
  const { plans } = await api.plans();
  keysView.setPlans(plans);
  await keysView.load();
}

/** @param {'info' | 'error'} [kind] */
function signOut(message = () => t('msg.signedOut'), kind = 'info') {
  sessionStorage.removeItem(TOKEN_KEY);
  for (const dialog of document.querySelectorAll('dialog')) if (dialog.open) dialog.close();
  $('#console-view').hidden = true;
  $('#sign-out').hidden = true;
  $('#sign-in-view').hidden = false;
  $('#pg-key').value = '';
  $('#admin-token').focus();
  announce(message, kind);
}

async function signIn(event) {
  event.preventDefault();
  const input = $('#admin-token');
  const token = input.value.trim();
  if (!token) {
    announce(() => t('msg.needToken'), 'error');
    input.focus();
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  try {
    await api.plans();
  } catch (error) {
    sessionStorage.removeItem(TOKEN_KEY);
    const wrong = error instanceof ApiProblem && error.status === 401;
    announce(() => (wrong ? t('msg.wrongToken') : describeError(error)), 'error');
    input.setAttribute('aria-invalid', 'true');
    input.focus();
    return;
  }
  input.value = '';
  input.removeAttribute('aria-invalid');
  await start();
  announce(() => t('msg.signedIn'));
}

async function start() {
  try {
    await enterConsole();
    $('#keys-heading').setAttribute('tabindex', '-1');
    $('#keys-heading').focus();
  } catch (error) {
    // A 401 has already signed out (see createAdminApi's callback).
    if (!(error instanceof ApiProblem && error.status === 401)) {
      announce(() => describeError(error), 'error');
    }
  }
}

function applyLanguage() {
  translatePage();
  $('#language').value = currentLanguage();
  keysView.render();
  renderDetail();
  eventsView.render();
  playground.render();
  drawChart();
  translateStatus();
}

function init() {
  applyLanguage();
  $('#language').addEventListener('change', (event) => {
    setLanguage(event.target.value);
    applyLanguage();
  });
  $('#sign-in-form').addEventListener('submit', (event) => void signIn(event));
  $('#sign-out').addEventListener('click', () => {
    clearStatus();
    signOut();
  });
  let chartWidth = 0;
  window.addEventListener('resize', () => {
    const width = $('#chart').clientWidth;
    if (width === chartWidth) return;
    chartWidth = width;
    drawChart();
  });
  $('#events-refresh').addEventListener('click', () => void refreshEvents());
  if (sessionStorage.getItem(TOKEN_KEY)) void start();
}

init();
