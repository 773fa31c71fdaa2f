/**
 * @module status
 * One polite live region for what just happened, so screen readers hear the outcome of
 * an action without losing their place. Messages are given as functions that return the
 * text, so a change of language can say the shown message again in the new language.
 */
import { $ } from './dom.js';

let timer;
/** The message shown now, as a function of the current language. */
let current;

/** @param {() => string} message @param {'info' | 'error'} kind */
export function announce(message, kind = 'info') {
  const region = $('#status');
  clearTimeout(timer);
  current = message;
  // Emptying first makes a repeated message be announced again.
  region.textContent = '';
  region.className = `status ${kind}`;
  timer = setTimeout(() => {
    region.textContent = message();
  }, 30);
}

/** Shows the current message again in the language chosen since. */
export function translateStatus() {
  const region = $('#status');
  if (current && region.textContent !== '') region.textContent = current();
}

export function clearStatus() {
  clearTimeout(timer);
  current = undefined;
  const region = $('#status');
  region.textContent = '';
  region.className = 'status';
}
