/**
 * @module keys-view
 * The keys table and its actions: create, change, activate / deactivate, rotate and
 * revoke. After every change the table is reloaded from the API (the server is the
 * truth; the CLI may change keys at the same time) and the focus returns to the row.
 */
import { confirmAction, openDialog, showSecret } from './dialogs.js';
import { $, h } from './dom.js';
import { formatNumber, t } from './i18n.js';
import { announce } from './status.js';

/** `1,000 / month` or `1,000 / month, 60 / minute`. */
function planLimits(plan) {
  const month = t('plan.month', { limit: formatNumber(plan.limit) });
  return plan.perMinute === null || plan.perMinute === undefined
    ? month
    : `${month}, ${t('plan.minute', { limit: formatNumber(plan.perMinute) })}`;
}

/** A cell's column heading, shown beside it where the table is laid out as cards. */
const cell = (column) => ({ 'data-label': t(`keys.${column}`) });

export function createKeysView({ api, describeError, onChart, onLoaded }) {
  /** @type {{ keys: any[], month: string, timeZone: string }} */
  let data = { keys: [], month: '', timeZone: '' };
  let plans = [];
  /** Which control to focus after the next render: `{ id, action }`. */
  let restoreFocus;

  async function load() {
    data = await api.listKeys();
    render();
    onLoaded?.(data.keys);
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
  }

  function render() {
    const total = data.keys.reduce((sum, key) => sum + key.usage.used, 0);
    $('#keys-summary').textContent = data.month
      ? t('keys.summary', {
          total: formatNumber(total),
          month: data.month,
          timeZone: data.timeZone,
        })
      : '';
    $('#keys-table tbody').replaceChildren(...data.keys.map(row));
    $('#keys-empty').hidden = data.keys.length > 0;
    if (restoreFocus) {
      const { id, action } = restoreFocus;
      restoreFocus = undefined;
      const target =
        document.querySelector(`[data-key-id="${CSS.escape(id)}"][data-action="${action}"]`) ??
        document.querySelector(`[data-key-id="${CSS.escape(id)}"]`) ??
        $('#new-key');
      target.focus();
    }
  }

  function row(key) {
    const revoked = key.status === 'revoked';
    const button = (action, label, onclick, extraClass) =>
      h(
        'button',
        {
          type: 'button',
          class: extraClass ?? 'secondary small',
          'data-action': action,
          'data-key-id': key.id,
          'aria-label': t('action.label', { action: label, name: key.name }),
          onclick,
        },
        label,
      );
    const actions = revoked
      ? [button('chart', t('action.chart'), () => onChart(key.id))]
      : [
          button('edit', t('action.edit'), () => edit(key)),
          button('toggle', key.active ? t('action.deactivate') : t('action.activate'), () =>
            toggle(key),
          ),
          button('rotate', t('action.rotate'), () => rotate(key)),
          button('revoke', t('action.revoke'), () => revoke(key), 'danger small'),
          button('chart', t('action.chart'), () => onChart(key.id)),
        ];
    return h(
      'tr',
      { 'data-key-row': key.id, class: revoked ? 'revoked' : undefined },
      h('th', { scope: 'row' }, key.name),
      h('td', cell('id'), h('code', {}, key.id)),
      h('td', cell('prefix'), h('code', {}, `${key.displayPrefix}…`)),
      h('td', { 'data-field': 'plan', ...cell('plan') }, key.plan),
      h(
        'td',
        { 'data-field': 'status', ...cell('status') },
        h('span', { class: `badge ${key.status}` }, t(`status.${key.status}`)),
      ),
      h('td', { 'data-field': 'usage', ...cell('usage') }, usageCell(key)),
      h('td', cell('actions'), h('div', { class: 'actions' }, ...actions)),
    );
  }

  function usageCell(key) {
    const { used, limit, perMinute } = key.usage;
    if (limit === null) return t('usage.noLimit', { used: formatNumber(used) });
    const month = monthUsage(key, used, limit);
    if (!perMinute) return month;
    return h(
      'div',
      {},
      month,
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
    restoreFocus = { id: issued.id, action: 'rotate' };
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
    restoreFocus = { id: key.id, action: 'edit' };
    if (!saved) return render();
    await reloadQuietly();
    announce(() => t('msg.updated', { name: saved.name }));
  }

  async function toggle(key) {
    restoreFocus = { id: key.id, action: 'toggle' };
    await run(async () => {
      const changed = await api.updateKey(key.id, { active: !key.active });
      await reloadQuietly();
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
    restoreFocus = { id: key.id, action: 'rotate' };
    if (!rotated) return render();
    await reloadQuietly();
    await showSecret(rotated.key);
    announce(() => t('msg.rotated', { name: rotated.name }));
  }

  async function revoke(key) {
    const confirmed = await confirmAction({
      heading: t('revoke.heading'),
      text: t('revoke.text', { name: key.name, id: key.id }),
      confirmLabel: t('revoke.submit'),
    });
    restoreFocus = { id: key.id, action: 'revoke' };
    if (!confirmed) return render();
    await run(async () => {
      const revoked = await api.revokeKey(key.id);
      await reloadQuietly();
      announce(() => t('msg.revoked', { name: revoked.name }));
    });
  }

  async function reloadQuietly() {
    try {
      await load();
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
  return { load, render, setPlans, keys: () => data.keys };
}
