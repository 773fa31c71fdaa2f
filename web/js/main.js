/**
 * @module main
 * The console's start: language, sign-in with the admin token, and the three parts
 * (keys, usage chart, playground). The token lives in sessionStorage only: it is gone
 * when the tab closes or on "Sign out", and no other page or tab can read it.
 */
import { ApiProblem, createAdminApi } from './admin-api.js';
import { $, h } from './dom.js';
import { currentLanguage, hasText, setLanguage, t, translatePage } from './i18n.js';
import { createKeysView } from './keys-view.js';
import { createPlayground } from './playground.js';
import { announce, clearStatus } from './status.js';
import { usageChart } from './usage-chart.js';

const TOKEN_KEY = 'plauder.adminToken';

const api = createAdminApi(
  () => sessionStorage.getItem(TOKEN_KEY) ?? '',
  () => signOut(t('msg.expired'), 'error'),
);

function describeError(error) {
  if (!(error instanceof ApiProblem)) return String(error?.message ?? error);
  if (error.code === 'network') return t('msg.network');
  return hasText(`err.${error.code}`) ? t(`err.${error.code}`) : error.message;
}

const keysView = createKeysView({
  api,
  describeError,
  onChart: (id) => {
    $('#chart-key').value = id;
    void showChart();
    $('#chart-key').focus();
  },
  onLoaded: (keys) => fillChartChoices(keys),
});
const playground = createPlayground({ onResponse: () => void refreshKeys() });

function fillChartChoices(keys) {
  const select = $('#chart-key');
  const chosen = select.value;
  select.replaceChildren(
    ...keys.map((key) => h('option', { value: key.id }, `${key.name} (${key.id})`)),
  );
  if (keys.some((key) => key.id === chosen)) select.value = chosen;
  void showChart();
}

async function showChart() {
  const figure = $('#chart');
  const id = $('#chart-key').value;
  const key = keysView.keys().find((k) => k.id === id);
  if (!key) {
    figure.replaceChildren(h('p', { class: 'hint' }, t('chart.none')));
    return;
  }
  try {
    const history = await api.keyHistory(id);
    if ($('#chart-key').value !== id) return;
    const current = history.months.at(-1)?.used ?? 0;
    figure.replaceChildren(
      usageChart({ name: key.name, limit: history.limit, months: history.months }),
      h(
        'figcaption',
        { class: 'hint' },
        t('chart.caption', { limit: history.limit ?? '—', used: current }),
      ),
    );
  } catch (error) {
    announce(describeError(error), 'error');
  }
}

async function refreshKeys() {
  try {
    await keysView.load();
  } catch (error) {
    announce(describeError(error), 'error');
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

function signOut(message = t('msg.signedOut'), kind = 'info') {
  sessionStorage.removeItem(TOKEN_KEY);
  for (const dialog of document.querySelectorAll('dialog[open]')) dialog.close();
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
    announce(t('msg.needToken'), 'error');
    input.focus();
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  try {
    await api.plans();
  } catch (error) {
    sessionStorage.removeItem(TOKEN_KEY);
    const wrong = error instanceof ApiProblem && error.status === 401;
    announce(wrong ? t('msg.wrongToken') : describeError(error), 'error');
    input.setAttribute('aria-invalid', 'true');
    input.focus();
    return;
  }
  input.value = '';
  input.removeAttribute('aria-invalid');
  await start();
  announce(t('msg.signedIn'));
}

async function start() {
  try {
    await enterConsole();
    $('#keys-heading').setAttribute('tabindex', '-1');
    $('#keys-heading').focus();
  } catch (error) {
    // A 401 has already signed out (see createAdminApi's callback).
    if (!(error instanceof ApiProblem && error.status === 401)) {
      announce(describeError(error), 'error');
    }
  }
}

function applyLanguage() {
  translatePage();
  $('#language').value = currentLanguage();
  keysView.render();
  playground.render();
  void showChart();
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
  $('#chart-key').addEventListener('change', () => void showChart());
  if (sessionStorage.getItem(TOKEN_KEY)) void start();
}

init();
