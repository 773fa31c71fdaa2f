/**
 * @module keys-view
 * The keys table, a page at a time: search, filters (plan, active), order and paging go to
 * the admin API (`GET /admin/v1/keys`, docs/admin.md "Lists: paging, search, filters"), so
 * the page holds one page of keys however many there are. Each row is compact, its actions
 * in one menu; a change redraws only its row (from the key the API answers), a creation
 * reloads the page. The key's name opens its details (charts, actions).
 */
import { confirmAction, openDialog, showSecret } from './dialogs.js';
import { $, h } from './dom.js';
import { formatNumber, t } from './i18n.js';
import { announce } from './status.js';

/** Keys per page of the table. */
const PAGE_SIZE = 50;
/** How long typing may pause before the search is sent. */
const SEARCH_DELAY_MS = 250;

/** `1,000 / month` or `1,000 / month, 60 / minute`. */
function planLimits(plan) {
  const month = t('plan.month', { limit: formatNumber(plan.limit) });
  return plan.perMinute === null || plan.perMinute === undefined
    ? month
    : `${month}, ${t('plan.minute', { limit: formatNumber(plan.perMinute) })}`;
}

/** A cell's column heading, shown beside it where the table is laid out as cards. */
const cell = (column) => ({ 'data-label': t(`keys.${column}`) });

export function createKeysView({ api, describeError, onOpen, onChanged, onLoaded }) {
  /** @type {{ keys: any[], month: string, timeZone: string, page: { limit: number, total: number, nextCursor: string | null } }} */
  let data = {
    keys: [],
    month: '',
    timeZone: '',
    page: { limit: PAGE_SIZE, total: 0, nextCursor: null },
  };
  /** The month's requests of all keys of the filter (the usage report's total). */
  let requests = 0;
  let plans = [];
  /** The cursor each page shown so far started at (undefined: the first page). */
  /** @type {(string | undefined)[]} */
  let starts = [undefined];
  let pageIndex = 0;
  /** Answers of an older load (the filter changed meanwhile) are dropped. */
  let loads = 0;
  /** Which control to focus after the next render: `{ id, action }`. */
  let restoreFocus;

  function query() {
    /** @type {Record<string, string>} */
    const params = { limit: String(PAGE_SIZE), sort: $('#keys-sort').value };
    const q = $('#keys-search').value.trim();
    if (q) params.q = q;
    if ($('#keys-plan').value) params.plan = $('#keys-plan').value;
    if ($('#keys-active').value) params.active = $('#keys-active').value;
    const cursor = starts[pageIndex];
    if (cursor) params.cursor = cursor;
    return params;
  }

  async function load() {
    const asked = ++loads;
    const params = query();
    const { cursor: _cursor, limit: _limit, sort: _sort, ...filter } = params;
    const [list, usage] = await Promise.all([
      api.listKeys(params),
      api.usage({ ...filter, limit: '1' }),
    ]);
    if (asked !== loads) return;
    data = list;
    requests = usage.total;
    render();
    onLoaded?.(data.keys);
  }

  /** From the first page again (a new search, filter or order). */
  function reload() {
    starts = [undefined];
    pageIndex = 0;
    return load();
  }

  function setPlans(list) {
    plans = list;
    for (const select of [$('#create-plan'), $('#edit-plan')]) {
      select.replaceChildren(
        ...plans.map((plan) =>
          h('option', { value: plan.name }, `${plan.name} (${planLimits(plan)})`),
        ),
      );
    }
    const filter = $('#keys-plan');
    const chosen = filter.value;
    filter.replaceChildren(
      h('option', { value: '', 'data-i18n': 'filter.all' }, t('filter.all')),
      ...plans.map((plan) => h('option', { value: plan.name }, plan.name)),
    );
    filter.value = chosen;
  }

  function render() {
    $('#keys-summary').textContent = data.month
      ? t('keys.summary', {
          total: formatNumber(requests),
          month: data.month,
          timeZone: data.timeZone,
        })
      : '';
    $('#keys-table tbody').replaceChildren(...data.keys.map(row));
    const filtered = Object.keys(query()).some((name) => ['q', 'plan', 'active'].includes(name));
    $('#keys-empty').hidden = data.keys.length > 0;
    $('#keys-empty').textContent = filtered ? t('keys.noMatch') : t('keys.empty');
    const from = pageIndex * PAGE_SIZE + 1;
    $('#keys-range').textContent =
      data.keys.length === 0
        ? ''
        : t('pager.range', {
            from: formatNumber(from),
            to: formatNumber(from + data.keys.length - 1),
            total: formatNumber(data.page.total),
          });
    $('#keys-prev').disabled = pageIndex === 0;
    $('#keys-next').disabled = data.page.nextCursor === null;
    $('.pager').hidden = pageIndex === 0 && data.page.nextCursor === null;
    focusRestored();
  }

  function focusRestored() {
    if (!restoreFocus) return;
    const { id, action } = restoreFocus;
    restoreFocus = undefined;
    const target =
      document.querySelector(`[data-key-id="${CSS.escape(id)}"][data-action="${action}"]`) ??
      document.querySelector(`[data-key-id="${CSS.escape(id)}"][data-action="menu"]`) ??
      document.querySelector(`[data-key-id="${CSS.escape(id)}"]`) ??
      $('#new-key');
    target.focus();
  }

  /** Draws one key's row again, from the key as the API answered it. */
  function redraw(key) {
    data.keys = data.keys.map((k) => (k.id === key.id ? key : k));
    const shown = document.querySelector(`tr[data-key-row="${CSS.escape(key.id)}"]`);
    shown?.replaceWith(row(key));
    onChanged?.(key);
    focusRestored();
  }

  function row(key) {
    const revoked = key.status === 'revoked';
    const item = (action, label, onclick, extraClass) =>
      h(
        'button',
        {
          type: 'button',
          role: 'menuitem',
          class: extraClass ?? 'menu-item',
          'data-action': action,
          'data-key-id': key.id,
          'aria-label': t('action.label', { action: label, name: key.name }),
          onclick: (event) => {
            event.currentTarget.closest('details')?.removeAttribute('open');
            onclick();
          },
        },
        label,
      );
    // A revoked key can no longer be changed: no menu.
    const menu = revoked
      ? undefined
      : h(
          'details',
          { class: 'menu' },
          h(
            'summary',
            {
              class: 'menu-button',
              'data-action': 'menu',
              'data-key-id': key.id,
              'aria-label': t('action.label', { action: t('keys.actions'), name: key.name }),
            },
            t('keys.actions'),
          ),
          h(
            'div',
            { class: 'menu-items', role: 'menu' },
            ...actionButtons(key).map(([action, label, onclick, extra]) =>
              item(action, label, onclick, extra),
            ),
          ),
        );
    return h(
      'tr',
      { 'data-key-row': key.id, class: revoked ? 'revoked' : undefined },
      h(
        'th',
        { scope: 'row' },
        h(
          'button',
          {
            type: 'button',
            class: 'link',
            'data-action': 'open',
            'data-key-id': key.id,
            'aria-label': t('action.label', { action: t('action.open'), name: key.name }),
            onclick: () => onOpen(key),
          },
          key.name,
        ),
      ),
      h('td', cell('id'), h('code', {}, key.id)),
      h('td', { 'data-field': 'plan', ...cell('plan') }, key.plan),
      h(
        'td',
        { 'data-field': 'status', ...cell('status') },
        h('span', { class: `badge ${key.status}` }, t(`status.${key.status}`)),
      ),
      h('td', { 'data-field': 'usage', ...cell('usage') }, usageCell(key)),
      h('td', cell('actions'), menu),
    );
  }

  /** What can be done to a key that is not revoked: [action, label, run, class?]. */
  function actionButtons(key) {
    if (key.status === 'revoked') return [];
    return [
      ['edit', t('action.edit'), () => edit(key)],
      ['toggle', key.active ? t('action.deactivate') : t('action.activate'), () => toggle(key)],
      ['rotate', t('action.rotate'), () => rotate(key)],
      ['revoke', t('action.revoke'), () => revoke(key), 'menu-item danger-text'],
    ];
  }

  function usageCell(key) {
    const { used, limit, perMinute, tokens } = key.usage;
    if (limit === null) return t('usage.noLimit', { used: formatNumber(used) });
    const month = monthUsage(key, used, limit);
    const hints = [];
    if (perMinute) {
      hints.push(
        h(
          'span',
          { class: 'hint usage-minute', 'data-field': 'minute' },
          t('usage.minute', {
            used: formatNumber(perMinute.used),
            limit: formatNumber(perMinute.limit),
          }),
        ),
      );
    }
    // Tokens beside requests where the plan has a token budget (docs/quota-and-limits.md).
    if (tokens) {
      hints.push(
        h(
          'span',
          { class: 'hint usage-tokens', 'data-field': 'tokens' },
          tokens.limit === null
            ? t('usage.tokensNoLimit', { used: formatNumber(tokens.used) })
            : t('usage.tokens', {
                used: formatNumber(tokens.used),
                limit: formatNumber(tokens.limit),
              }),
        ),
      );
    }
    if (hints.length === 0) return month;
    return h('div', {}, month, ...hints);
  }

  function monthUsage(key, used, limit) {
    return h(
      'div',
      { class: 'usage' },
      h('meter', {
        min: 0,
        max: limit,
        value: Math.min(used, limit),
        low: Math.round(limit * 0.75),
        high: Math.round(limit * 0.9),
        optimum: 0,
        'aria-label': t('usage.aria', {
          used: formatNumber(used),
          limit: formatNumber(limit),
          name: key.name,
        }),
      }),
      h(
        'span',
        { class: 'usage-text' },
        t('usage.text', { used: formatNumber(used), limit: formatNumber(limit) }),
      ),
    );
  }

  async function create() {
    const name = $('#create-name');
    name.value = '';
    $('#create-active').checked = true;
    const issued = await openDialog($('#create-dialog'), {
      describeError,
      focus: name,
      onSubmit: () =>
        api.createKey({
          name: name.value.trim(),
          plan: $('#create-plan').value,
          active: $('#create-active').checked,
        }),
    });
    if (!issued) return;
    restoreFocus = { id: issued.id, action: 'menu' };
    await reloadQuietly();
    await showSecret(issued.key);
    announce(() => t('msg.created', { name: issued.name }));
  }

  async function edit(key) {
    const name = $('#edit-name');
    const plan = $('#edit-plan');
    name.value = key.name;
    plan.value = key.plan;
    const saved = await openDialog($('#edit-dialog'), {
      describeError,
      focus: name,
      onSubmit: async () => {
        const patch = {};
        if (name.value.trim() !== key.name) patch.name = name.value.trim();
        if (plan.value !== key.plan) patch.plan = plan.value;
        if (Object.keys(patch).length === 0) return key;
        return api.updateKey(key.id, patch);
      },
    });
    restoreFocus = { id: key.id, action: 'menu' };
    if (!saved) return focusRestored();
    redraw(saved);
    announce(() => t('msg.updated', { name: saved.name }));
  }

  async function toggle(key) {
    restoreFocus = { id: key.id, action: 'menu' };
    await run(async () => {
      const changed = await api.updateKey(key.id, { active: !key.active });
      redraw(changed);
      announce(() =>
        t(changed.active ? 'msg.activated' : 'msg.deactivated', { name: changed.name }),
      );
    });
  }

  async function rotate(key) {
    $('#rotate-text').textContent = t('rotate.text', { name: key.name, id: key.id });
    $('#rotate-grace').value = '0';
    const rotated = await openDialog($('#rotate-dialog'), {
      describeError,
      focus: $('#rotate-grace'),
      onSubmit: () => api.rotateKey(key.id, $('#rotate-grace').value),
    });
    restoreFocus = { id: key.id, action: 'menu' };
    if (!rotated) return focusRestored();
    const { key: secret, previousKeyExpiresAt: _expires, ...view } = rotated;
    redraw(view);
    await showSecret(secret);
    announce(() => t('msg.rotated', { name: rotated.name }));
  }

  async function revoke(key) {
    const confirmed = await confirmAction({
      heading: t('revoke.heading'),
      text: t('revoke.text', { name: key.name, id: key.id }),
      confirmLabel: t('revoke.submit'),
    });
    restoreFocus = { id: key.id, action: 'open' };
    if (!confirmed) return focusRestored();
    await run(async () => {
      const revoked = await api.revokeKey(key.id);
      redraw(revoked);
      announce(() => t('msg.revoked', { name: revoked.name }));
    });
  }

  async function reloadQuietly(fromStart = false) {
    try {
      await (fromStart ? reload() : load());
    } catch (error) {
      announce(() => describeError(error), 'error');
    }
  }

  async function run(action) {
    try {
      await action();
    } catch (error) {
      announce(() => t('msg.failed', { message: describeError(error) }), 'error');
      await reloadQuietly();
    }
  }

  $('#new-key').addEventListener('click', () => void create());
  let typing;
  $('#keys-search').addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => void reloadQuietly(true), SEARCH_DELAY_MS);
  });
  $('#keys-filter').addEventListener('submit', (event) => {
    event.preventDefault();
    clearTimeout(typing);
    void reloadQuietly(true);
  });
  for (const select of ['#keys-plan', '#keys-active', '#keys-sort'])
    $(select).addEventListener('change', () => void reloadQuietly(true));
  $('#keys-next').addEventListener('click', () => {
    if (data.page.nextCursor === null) return;
    starts = [...starts.slice(0, pageIndex + 1), data.page.nextCursor];
    pageIndex++;
    void reloadQuietly();
  });
  $('#keys-prev').addEventListener('click', () => {
    if (pageIndex === 0) return;
    pageIndex--;
    void reloadQuietly();
  });
  // One menu open at a time; a click elsewhere or Escape closes it.
  document.addEventListener('click', (event) => {
    for (const open of document.querySelectorAll('details.menu[open]'))
      if (!open.contains(/** @type {Node} */ (event.target))) open.removeAttribute('open');
  });
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    const open = document.querySelector('details.menu[open]');
    if (!open) return;
    open.removeAttribute('open');
    /** @type {HTMLElement | null} */ (open.querySelector('summary'))?.focus();
  });
  return {
    load,
    render,
    setPlans,
    actions: actionButtons,
    keys: () => data.keys,
  };
}
