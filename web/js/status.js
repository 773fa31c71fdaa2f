/**
 * @module status
 * One polite live region for what just happened, so screen readers hear the outcome of
 * an action without losing their place.
 */
import { $ } from './dom.js';

let timer;

export function announce(message, kind = 'info') {
  const region = $('#status');
  clearTimeout(timer);
  // Emptying first makes a repeated message be announced again.
  region.textContent = '';
  region.className = `status ${kind}`;
  timer = setTimeout(() => {
    region.textContent = message;
  }, 30);
}

export function clearStatus() {
  clearTimeout(timer);
  const region = $('#status');
  region.textContent = '';
  region.className = 'status';
}
