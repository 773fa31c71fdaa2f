/**
 * @module dom
 * Small DOM helpers. Text from the API (key names) only ever goes into `textContent`,
 * never into HTML, so a key named `<img onerror=...>` stays text.
 */

/**
 * The element `selector` finds (typed loosely: the console knows what each id holds).
 * @param {string} selector
 * @param {ParentNode} [root]
 * @returns {any}
 */
export function $(selector, root = document) {
  const element = root.querySelector(selector);
  if (!element) throw new Error(`missing element ${selector}`);
  return element;
}

/** `h('button', { type: 'button', class: 'x' }, 'text', child)` */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      element.addEventListener(name.slice(2), value);
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  element.append(...children.filter((child) => child !== undefined && child !== null));
  return element;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  element.append(...children);
  return element;
}
