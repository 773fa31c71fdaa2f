/**
 * @module dialogs
 * Modal dialogs on the native `<dialog>`: it traps focus, closes on Escape and returns
 * focus to where it was. A failed submit keeps the dialog open and says why inside it
 * (the page behind a modal dialog is inert, so its live region would not be heard).
 */
import { $, h } from './dom.js';
import { t } from './i18n.js';

/**
 * Opens `dialog` and resolves with what `onSubmit` returned, or undefined when closed
 * without submitting (Cancel, Escape). `onSubmit` may throw to keep the dialog open.
 */
/**
 * @param {HTMLDialogElement} dialog
 * @param {{
 *   onSubmit?: () => unknown,
 *   describeError?: (error: unknown) => string,
 *   focus?: HTMLElement,
 * }} [options]
 */
export function openDialog(dialog, { onSubmit, describeError, focus } = {}) {
  const form = $('form', dialog);
  const submitButton = form.querySelector('[type="submit"]');
  const errorBox = form.querySelector('.dialog-error') ?? addErrorBox(form);
  errorBox.hidden = true;
  errorBox.textContent = '';

  return new Promise((resolve) => {
    let result;
    const submit = async (event) => {
      event.preventDefault();
      if (!form.reportValidity()) return;
      if (submitButton) submitButton.disabled = true;
      try {
        result = await onSubmit?.();
        dialog.close();
      } catch (error) {
        errorBox.textContent = describeError
          ? describeError(error)
          : String(/** @type {Error} */ (error).message);
        errorBox.hidden = false;
      } finally {
        if (submitButton) submitButton.disabled = false;
      }
    };
    const cancel = () => dialog.close();
    const closers = [...form.querySelectorAll('[data-close]')];
    const closed = () => {
      form.removeEventListener('submit', submit);
      for (const button of closers) button.removeEventListener('click', cancel);
      resolve(result);
    };
    form.addEventListener('submit', submit);
    for (const button of closers) button.addEventListener('click', cancel);
    dialog.addEventListener('close', closed, { once: true });
    dialog.showModal();
    focus?.focus();
  });
}

function addErrorBox(form) {
  const box = h('p', { class: 'dialog-error', role: 'alert', hidden: true });
  form.querySelector('.dialog-buttons')?.before(box);
  return box;
}

/** Asks before something that cannot be undone; resolves true when confirmed. */
export async function confirmAction({ heading, text, confirmLabel }) {
  const dialog = $('#confirm-dialog');
  $('#confirm-heading').textContent = heading;
  $('#confirm-text').textContent = text;
  $('#confirm-submit').textContent = confirmLabel;
  // The safe choice has the focus, so Enter alone does not confirm.
  const confirmed = await openDialog(dialog, {
    onSubmit: async () => true,
    focus: $('[data-close]', dialog),
  });
  return confirmed === true;
}

/** Shows a new key once. The value leaves the page when the dialog closes. */
export async function showSecret(key) {
  const dialog = $('#secret-dialog');
  const input = $('#secret-value');
  const note = $('#secret-copied');
  const copyButton = $('#secret-copy');
  input.value = key;
  note.textContent = '';
  const copy = async () => {
    note.textContent = (await copyText(input)) ? t('secret.copied') : t('secret.copyFailed');
  };
  copyButton.addEventListener('click', copy);
  const selectAll = () => input.select();
  input.addEventListener('focus', selectAll);
  await openDialog(dialog, { onSubmit: async () => true, focus: input });
  copyButton.removeEventListener('click', copy);
  input.removeEventListener('focus', selectAll);
  input.value = '';
  note.textContent = '';
}

async function copyText(input) {
  try {
    // Only in secure contexts (https, localhost); elsewhere the old way below.
    if (navigator.clipboard) {
      await navigator.clipboard.writeText(input.value);
      return true;
    }
  } catch {
    // fall through
  }
  input.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  }
}
