/**
 * The console end to end in headless Chromium (Debian's /usr/bin/chromium driven by
 * playwright-core; never a browser download): an operator signs in with the keyboard,
 * creates a key, tries it in the playground, rotates it, sees the old key refused,
 * revokes it. Screenshots go to test-output/console/. The page must log no errors and
 * talk to no host but the service.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/test-server.js';
import { ADMIN_TOKEN, startAdminServer } from './admin-client.js';

const SHOTS = path.resolve('test-output/console');
const DIALECT = process.env.PLAUDER_TEST_DIALECT ?? 'sqlite';
/** Chromium reports every non-2xx fetch as a console error; the 401s below are deliberate. */
const EXPECTED_ERRORS = /^Failed to load resource: the server responded with a status of 401/;

let browser: Browser;
let server: TestServer;

beforeAll(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  server = await startAdminServer();
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Console errors and requests to other hosts, collected while the page lives. */
function watch(page: Page) {
  const errors: string[] = [];
  const foreign: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol === 'data:' || url.protocol === 'blob:') return;
    if (url.hostname !== '127.0.0.1') foreign.push(request.url());
  });
  return {
    foreign,
    unexpectedErrors: () => errors.filter((e) => !EXPECTED_ERRORS.test(e)),
  };
}

/** The server's error log lines, to explain an unexpected status in a failure message. */
const serverErrors = () =>
  server.logs.filter((line) => /"level":(50|60)/.test(line)).join('\n') || 'no server errors';

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${DIALECT}-${name}.png`), fullPage: true });
}

const text = async (page: Page, selector: string) =>
  ((await page.locator(selector).textContent()) ?? '').trim();

// Page-side expressions are strings, so the tests compile without the DOM's types.
const inPage = <T>(page: Page, expression: string) => page.evaluate(expression) as Promise<T>;
const focusedId = (page: Page) => inPage<string | undefined>(page, 'document.activeElement?.id');
const tokenInSession = (page: Page) =>
  inPage<string | null>(page, "sessionStorage.getItem('plauder.adminToken')");

async function waitForText(page: Page, selector: string, pattern: RegExp): Promise<string> {
  await page.locator(selector, { hasText: pattern }).waitFor();
  return text(page, selector);
}

async function sendChat(page: Page, key: string, message: string): Promise<string> {
  await page.fill('#pg-key', key);
  await page.fill('#pg-message', message);
  // The button is disabled from the click until the answer is shown.
  await Promise.all([
    page.waitForResponse((r) => /\/api\/chat(-en)?$/.test(r.url())),
    page.click('#playground-form button[type="submit"]'),
  ]);
  await page.waitForSelector('#playground-form button[type="submit"]:not([disabled])');
  return text(page, '#pg-status');
}

describe('the admin console in a browser', () => {
  it('signs in with the keyboard, creates, tries, rotates and revokes a key', async () => {
    const context = await browser.newContext({
      locale: 'en-US',
      viewport: { width: 1280, height: 900 },
    });
    const page = await context.newPage();
    const seen = watch(page);

    const response = await page.goto(`${server.url}/admin/`);
    expect(response?.headers()['content-security-policy']).toMatch(/^default-src 'self'/);
    expect(await text(page, '#sign-in-heading')).toBe('Sign in');

    // Keyboard only: Tab to the token field, type, Enter. A wrong token first.
    for (let i = 0; i < 10; i++) {
      if ((await focusedId(page)) === 'admin-token') break;
      await page.keyboard.press('Tab');
    }
    expect(await focusedId(page)).toBe('admin-token');
    await page.keyboard.type('wrong-token-wrong-token-wrong');
    await page.keyboard.press('Enter');
    expect(await waitForText(page, '#status', /wrong/)).toBe('The admin token is wrong.');
    expect(await page.getAttribute('#admin-token', 'aria-invalid')).toBe('true');
    await page.keyboard.press('Control+A');
    await page.keyboard.type(ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.locator('#keys-heading').waitFor({ state: 'visible' });
    expect(await waitForText(page, '#status', /Signed in/)).toBe('Signed in.');
    expect(await focusedId(page)).toBe('keys-heading');
    expect(await tokenInSession(page)).toBe(ADMIN_TOKEN);
    expect(await inPage<string>(page, 'JSON.stringify(localStorage)')).not.toContain(ADMIN_TOKEN);
    expect(await page.isVisible('#sign-in-view')).toBe(false);
    await shot(page, '01-signed-in');

    // German and back.
    await page.selectOption('#language', 'de');
    expect(await text(page, '#keys-heading')).toBe('Schlüssel');
    expect(await page.getAttribute('html', 'lang')).toBe('de');
    await page.selectOption('#language', 'en');
    expect(await text(page, '#keys-heading')).toBe('Keys');

    // Escape closes a dialog and gives the focus back.
    await page.click('#new-key');
    await page.locator('#create-dialog').waitFor({ state: 'visible' });
    expect(await focusedId(page)).toBe('create-name');
    await page.keyboard.press('Escape');
    await page.locator('#create-dialog').waitFor({ state: 'hidden' });
    expect(await focusedId(page)).toBe('new-key');

    // Create: the key is shown once, with a warning.
    await page.click('#new-key');
    await page.fill('#create-name', 'e2e tool');
    await page.selectOption('#create-plan', 'plus');
    await page.click('#create-dialog button[type="submit"]');
    await page.locator('#secret-dialog').waitFor({ state: 'visible' });
    expect(await text(page, '#secret-warning')).toContain('It will not be shown again.');
    const firstKey = await page.inputValue('#secret-value');
    expect(firstKey).toMatch(/^plauder_[A-Za-z0-9]{38}$/);
    await shot(page, '02-key-created');
    await page.click('#secret-copy');
    expect(await waitForText(page, '#secret-copied', /./)).toMatch(/Copied|Copying failed/);
    await page.keyboard.press('Escape');
    await page.locator('#secret-dialog').waitFor({ state: 'hidden' });
    // The value is cleared once the dialog's close event has run.
    await expect.poll(() => page.inputValue('#secret-value')).toBe('');
    expect(await waitForText(page, '#status', /created/)).toBe('Key "e2e tool" created.');
    const row = page.locator('tr', { hasText: 'e2e tool' });
    expect(await row.locator('[data-field="plan"]').textContent()).toBe('plus');
    expect(await row.locator('[data-field="status"]').textContent()).toBe('active');
    expect(await row.locator('.usage-text').textContent()).toBe('0 / 5,000');
    expect(await row.textContent()).toContain(firstKey.slice(0, 12));
    const keyId = await row.getAttribute('data-key-row');
    expect(keyId).toMatch(/^key_/);
    expect(await page.content()).not.toContain(firstKey);

    // Playground: a reply, 200 and the RateLimit headers.
    await page.check('input[value="/api/chat-en"]');
    await page.fill('#pg-session', 'e2e-session');
    expect(
      await sendChat(page, firstKey, 'How many requests do I get per month?'),
      serverErrors(),
    ).toBe('200 OK');
    expect((await text(page, '#pg-reply')).length).toBeGreaterThan(5);
    expect(await text(page, '#pg-error')).toBe('—');
    expect(await text(page, '[data-header="ratelimit"]')).toMatch(/^"monthly";r=4999;t=\d+$/);
    expect(await text(page, '[data-header="ratelimit-policy"]')).toMatch(
      /^"monthly";q=5000;w=\d+$/,
    );
    expect(await text(page, '[data-header="x-ratelimit-limit"]')).toBe('5000');
    expect(await text(page, '[data-header="x-ratelimit-remaining"]')).toBe('4999');
    expect(await text(page, '[data-header="x-ratelimit-reset"]')).toMatch(/^\d+ \(\d{4}-/);
    expect(await waitForText(page, `tr[data-key-row="${keyId}"] .usage-text`, /^1 \//)).toBe(
      '1 / 5,000',
    );
    await shot(page, '03-playground-reply');

    // Rotate without grace: a new key, shown once.
    await row.getByRole('button', { name: 'Rotate: e2e tool' }).click();
    await page.locator('#rotate-dialog').waitFor({ state: 'visible' });
    expect(await page.inputValue('#rotate-grace')).toBe('0');
    await page.click('#rotate-dialog button[type="submit"]');
    await page.locator('#secret-dialog').waitFor({ state: 'visible' });
    const secondKey = await page.inputValue('#secret-value');
    expect(secondKey).toMatch(/^plauder_/);
    expect(secondKey).not.toBe(firstKey);
    await page.click('#secret-dialog button[type="submit"]');
    await page.locator('#secret-dialog').waitFor({ state: 'hidden' });
    expect(await waitForText(page, '#status', /rotated/)).toBe('Key "e2e tool" rotated.');

    // The old key is refused; the new one works and keeps the count.
    expect(await sendChat(page, firstKey, 'Still there?')).toBe('401 Unauthorized');
    expect(await text(page, '#pg-error')).toMatch(/^invalid_api_key: /);
    expect(await text(page, '[data-header="ratelimit"]')).toBe('(not sent)');
    await shot(page, '04-old-key-refused');
    expect(await sendChat(page, secondKey, 'And now?'), serverErrors()).toBe('200 OK');
    expect(await text(page, '[data-header="x-ratelimit-remaining"]')).toBe('4998');

    // The 12-month chart of the key.
    await row.getByRole('button', { name: 'Chart: e2e tool' }).click();
    await page.waitForSelector('#chart svg rect.bar.current[data-used="2"]');
    expect(await page.locator('#chart svg rect.bar').count()).toBe(12);
    expect(await page.locator('#chart svg title').textContent()).toBe(
      'Requests per month: e2e tool',
    );
    await shot(page, '05-usage-chart');

    // Revoke, after a confirmation whose safe choice has the focus.
    await row.getByRole('button', { name: 'Revoke: e2e tool' }).click();
    await page.locator('#confirm-dialog').waitFor({ state: 'visible' });
    expect(await text(page, '#confirm-text')).toContain('This cannot be undone.');
    expect(await inPage<string>(page, 'document.activeElement?.textContent')).toBe('Cancel');
    await page.click('#confirm-submit');
    await page.locator('#confirm-dialog').waitFor({ state: 'hidden' });
    expect(await waitForText(page, '#status', /revoked/)).toBe('Key "e2e tool" revoked.');
    expect(await row.locator('[data-field="status"]').textContent()).toBe('revoked');
    expect(await row.getByRole('button', { name: 'Rotate: e2e tool' }).count()).toBe(0);
    expect(await sendChat(page, secondKey, 'Revoked?')).toBe('401 Unauthorized');
    await shot(page, '06-key-revoked');

    // Sign out: the token is gone, and so is the pasted key.
    await page.click('#sign-out');
    await page.locator('#sign-in-view').waitFor({ state: 'visible' });
    expect(await tokenInSession(page)).toBeNull();
    expect(await page.inputValue('#pg-key')).toBe('');

    expect(seen.unexpectedErrors()).toEqual([]);
    expect(seen.foreign).toEqual([]);
    await context.close();
  });

  it('starts in German when the browser prefers German', async () => {
    const context = await browser.newContext({ locale: 'de-DE' });
    const page = await context.newPage();
    const seen = watch(page);
    await page.goto(`${server.url}/admin/`);
    expect(await text(page, '#sign-in-heading')).toBe('Anmelden');
    expect(await page.getAttribute('html', 'lang')).toBe('de');
    expect(await page.textContent('label[for="admin-token"]')).toBe('Admin-Token');
    expect(seen.unexpectedErrors()).toEqual([]);
    expect(seen.foreign).toEqual([]);
    await context.close();
  });

  it('shows the API docs at /docs from local assets only', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    const seen = watch(page);
    await page.goto(`${server.url}/docs`);
    await page.waitForSelector('.opblock-summary-path');
    const paths = await page.locator('.opblock-summary-path').allTextContents();
    expect(paths.map((p) => p.replace(/\u200b/g, ''))).toEqual(
      expect.arrayContaining(['/api/chat', '/api/chat-en', '/admin/v1/keys']),
    );
    await shot(page, '07-api-docs');
    expect(seen.unexpectedErrors()).toEqual([]);
    expect(seen.foreign).toEqual([]);
    await context.close();
  });
});
