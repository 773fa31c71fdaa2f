/**
 * The console end to end in headless Chromium (Debian's /usr/bin/chromium driven by
 * playwright-core; never a browser download): an operator signs in with the keyboard,
 * creates a key, tries it in the playground, rotates it, sees the old key refused,
 * revokes it. Screenshots go to test-output/console/. The page must log no errors and
 * talk to no host but the service.
 *
 * The layout at 375 px (a phone) and 1280 px: no sideways scrolling, every control on the
 * screen, the charts' labels apart, the month chart's limit line and the current month's
 * days drawn, the language switch reaching everything, the new key seen whole. Those
 * pages are compared with the screenshots in test/admin/baselines/ (a few pixels may differ). The data and the server's clock are
 * fixed, animations are off, and what is random (key ids and prefixes) is masked, so both
 * database projects compare against the same baselines.
 *
 * After a deliberate change to the console's look, write new baselines and commit them:
 *   UPDATE_BASELINES=1 npx vitest run --project sqlite test/admin/console.browser.test.ts
 * On a mismatch the page as seen and a diff image go to test-output/console/.
 */
import fs from 'node:fs';
import path from 'node:path';
import pixelmatch from 'pixelmatch';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayPrefix, generateKey, hashKey } from '../../src/keys/key-format.js';
import { createStore } from '../../src/storage/create-database.js';
import { chat, type TestServer } from '../helpers/test-server.js';
import { ADMIN_TOKEN, admin, startAdminServer } from './admin-client.js';

const SHOTS = path.resolve('test-output/console');
const BASELINES = path.resolve('test/admin/baselines');
const UPDATE_BASELINES = process.env.UPDATE_BASELINES === '1';
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

/** Opens a row's actions menu and chooses `name` in it. */
async function rowAction(row: Locator, name: string): Promise<void> {
  await row.locator('details.menu > summary').click();
  await row.getByRole('menuitem', { name }).click();
}

async function sendChat(page: Page, key: string, message: string): Promise<string> {
  await page.fill('#pg-key', key);
  await page.fill('#pg-message', message);
  // The button is disabled from the click until the answer is shown.
  await Promise.all([
    page.waitForResponse((r) => /\/(api\/chat(-en)?|v1\/[a-z/]+)$/.test(r.url())),
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
    const keyId = await row.getAttribute('data-key-row');
    expect(keyId).toMatch(/^key_/);
    expect(await page.content()).not.toContain(firstKey);

    // Playground: a reply, 200 and the RateLimit headers.
    await page.selectOption('#pg-door', '/api/chat-en');
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
    await rowAction(row, 'Rotate: e2e tool');
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

    // The key's details, opened from its row: its new prefix and the 12-month chart.
    await row.getByRole('button', { name: 'Details: e2e tool' }).click();
    expect(await text(page, '#key-detail')).toContain(secondKey.slice(0, 12));
    await page.waitForSelector('#chart svg rect.bar.current[data-used="2"]');
    expect(await page.locator('#chart svg rect.bar').count()).toBe(12);
    expect(await page.locator('#chart svg title').textContent()).toBe(
      'Requests per month: e2e tool',
    );
    // Today's column holds both requests, under the old and the new secret.
    await page.waitForSelector('#day-chart svg rect.bar.current[data-used="2"]');
    await shot(page, '05-usage-chart');

    // The other doors: each in its own format, streamed, the reply shown as it arrives.
    for (const door of ['/v1/chat/completions', '/v1/responses', '/v1/messages']) {
      await page.selectOption('#pg-door', door);
      await page.selectOption('#pg-model', 'plauder-en');
      expect(await sendChat(page, secondKey, 'Hello, who are you?'), door).toBe('200 OK');
      expect((await text(page, '#pg-reply')).length, door).toBeGreaterThan(5);
      expect(await text(page, '#pg-error'), door).toBe('—');
      expect(await text(page, '[data-header="x-ratelimit-limit"]'), door).toBe('5000');
    }
    expect(await text(page, '[data-header="x-ratelimit-remaining"]')).toBe('4995');
    await page.selectOption('#pg-door', '/api/chat');

    // Revoke, after a confirmation whose safe choice has the focus.
    await rowAction(row, 'Revoke: e2e tool');
    await page.locator('#confirm-dialog').waitFor({ state: 'visible' });
    expect(await text(page, '#confirm-text')).toContain('This cannot be undone.');
    expect(await inPage<string>(page, 'document.activeElement?.textContent')).toBe('Cancel');
    await page.click('#confirm-submit');
    await page.locator('#confirm-dialog').waitFor({ state: 'hidden' });
    expect(await waitForText(page, '#status', /revoked/)).toBe('Key "e2e tool" revoked.');
    expect(await row.locator('[data-field="status"]').textContent()).toBe('revoked');
    expect(await row.getByRole('menuitem', { name: 'Rotate: e2e tool' }).count()).toBe(0);
    expect(await row.locator('details.menu').count()).toBe(0);
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

/** 15 March 2026, 10:00 UTC: day 15 of 31 of the quota month. */
const NOW = Date.UTC(2026, 2, 15, 10, 0);
/** Requests of the key "Website" (plan trial, 12 a month) in the last six months. */
const WEBSITE_USAGE: [number, number, number][] = [
  [2025, 9, 4],
  [2025, 10, 7],
  [2025, 11, 11],
  [2026, 0, 9],
  [2026, 1, 12],
  [2026, 2, 5],
];
/** This month's requests, all sent on the 10th (see layoutServer). */
const WEBSITE_MARCH_ON_10TH = 5;

/** A server of its own whose clock stands at NOW, with three keys and their usage. */
async function layoutServer(): Promise<TestServer> {
  const clock = { now: NOW - 200 * 86_400_000 };
  const s = await startAdminServer({
    clock: () => clock.now,
    env: { PLAUDER_PLANS: 'trial=12,standard=1000,plus=5000', PLAUDER_QUOTA_TIMEZONE: 'UTC' },
  });
  const website = await s.createKey({ name: 'Website', plan: 'trial' });
  clock.now += 60_000;
  await s.createKey({ name: 'Mobile app', plan: 'plus' });
  clock.now += 60_000;
  const old = await s.createKey({ name: 'Old integration', plan: 'standard' });
  expect((await admin(s, `keys/${old.id}/revoke`, { method: 'POST' })).status).toBe(200);
  for (const [year, month, count] of WEBSITE_USAGE) {
    clock.now = Date.UTC(year, month, 10, 12);
    for (let i = 0; i < count; i++) {
      expect((await chat(s, website.key, { message: 'Hallo' })).status).toBe(200);
    }
  }
  clock.now = NOW;
  return s;
}

/** What differs from run to run: key ids and prefixes, and the chart's key choice naming one. */
const masks = (page: Page): Locator[] => [
  page.locator('#keys-table tbody code'),
  page.locator('#key-detail code'),
];

/**
 * Compares a full-page screenshot with test/admin/baselines/<name>.png (or writes it with
 * UPDATE_BASELINES=1). Up to 0.2 % of the pixels may differ (anti-aliasing).
 */
async function matchesBaseline(page: Page, name: string): Promise<void> {
  const actual = await page.screenshot({
    fullPage: true,
    animations: 'disabled',
    caret: 'hide',
    mask: masks(page),
    maskColor: '#9ca3af',
  });
  const file = path.join(BASELINES, `${name}.png`);
  if (UPDATE_BASELINES) {
    fs.mkdirSync(BASELINES, { recursive: true });
    fs.writeFileSync(file, actual);
    return;
  }
  const seen = path.join(SHOTS, `${DIALECT}-${name}.actual.png`);
  fs.writeFileSync(seen, actual);
  expect(fs.existsSync(file), `no baseline ${file}: run with UPDATE_BASELINES=1`).toBe(true);
  const expected = PNG.sync.read(fs.readFileSync(file));
  const got = PNG.sync.read(actual);
  expect(`${got.width}x${got.height}`, `${name}: the page's size changed (see ${seen})`).toBe(
    `${expected.width}x${expected.height}`,
  );
  const diff = new PNG({ width: got.width, height: got.height });
  const differing = pixelmatch(got.data, expected.data, diff.data, got.width, got.height, {
    threshold: 0.1,
  });
  const allowed = Math.ceil(got.width * got.height * 0.002);
  if (differing > allowed) {
    fs.writeFileSync(path.join(SHOTS, `${DIALECT}-${name}.diff.png`), PNG.sync.write(diff));
  }
  expect(differing, `${name}: ${differing} pixels differ (see ${seen})`).toBeLessThanOrEqual(
    allowed,
  );
}

/** Every element the page can scroll sideways: none may be wider than the window. */
const horizontalOverflow = (page: Page) =>
  inPage<{ scrollWidth: number; innerWidth: number }>(
    page,
    '({ scrollWidth: document.scrollingElement.scrollWidth, innerWidth: window.innerWidth })',
  );

/** Each visible control lies within the window's width, and a click would reach it. */
async function expectReachable(page: Page, selector: string): Promise<number> {
  const width = await inPage<number>(page, 'window.innerWidth');
  const controls = page.locator(selector);
  let checked = 0;
  for (const control of await controls.all()) {
    if (!(await control.isVisible())) continue;
    await control.scrollIntoViewIfNeeded();
    const box = await control.boundingBox();
    const label =
      (await control.getAttribute('aria-label')) ??
      (await control.getAttribute('id')) ??
      (await control.textContent());
    expect(box, String(label)).not.toBeNull();
    if (!box) continue;
    expect(box.x, String(label)).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width, String(label)).toBeLessThanOrEqual(width + 0.5);
    // Actionable: visible, enabled, stable and not covered by anything else.
    await control.click({ trial: true, timeout: 5_000 });
    checked++;
  }
  return checked;
}

/** The boxes of the month chart's labels: none may touch another. */
const monthLabelsApart = (page: Page) => labelsApart(page, '#chart');

/** The boxes of a chart's axis labels: none may touch another. */
async function labelsApart(page: Page, chart: string): Promise<number> {
  const boxes = await inPage<{ x: number; y: number; width: number; height: number }[]>(
    page,
    `[...document.querySelectorAll('${chart} svg text.axis-label')].map((t) => {
       const r = t.getBoundingClientRect();
       return { x: r.x, y: r.y, width: r.width, height: r.height };
     })`,
  );
  for (const [i, a] of boxes.entries()) {
    for (const [j, b] of boxes.entries()) {
      if (j <= i) continue;
      const apart =
        a.x + a.width <= b.x ||
        b.x + b.width <= a.x ||
        a.y + a.height <= b.y ||
        b.y + b.height <= a.y;
      expect(apart, `chart labels ${i} and ${j} overlap`).toBe(true);
    }
    // Drawn at the size it is shown at: 12 px text stays readable.
    expect(a.height).toBeGreaterThanOrEqual(11);
  }
  return boxes.length;
}

/** The day chart's columns with requests: date → count. */
const usedPerDay = (page: Page) =>
  inPage<Record<string, number>>(
    page,
    `Object.fromEntries([...document.querySelectorAll('#day-chart svg rect.bar')]
       .filter((r) => r.dataset.used !== '0').map((r) => [r.dataset.date, Number(r.dataset.used)]))`,
  );

/** The day chart's labels under its columns. */
const dayLabels = (page: Page) => page.locator('#day-chart svg text.day-label').allTextContents();

// The two widths have servers and browser contexts of their own: they run side by side,
// most of each is waiting on the browser.
describe.concurrent.each([
  { width: 375, height: 812 },
  { width: 1280, height: 900 },
])('the console at $width px', ({ width, height }) => {
  it('fits the screen, reaches every action and follows the language switch', async () => {
    const s = await layoutServer();
    const context = await browser.newContext({
      locale: 'en-US',
      timezoneId: 'UTC',
      viewport: { width, height },
      deviceScaleFactor: 1,
      reducedMotion: 'reduce',
    });
    try {
      const page = await context.newPage();
      const seen = watch(page);
      await page.goto(`${s.url}/admin/`);
      await page.evaluate("localStorage.setItem('plauder.language', 'en')");
      expect((await horizontalOverflow(page)).scrollWidth).toBeLessThanOrEqual(width);
      await page.fill('#admin-token', ADMIN_TOKEN);
      await page.press('#admin-token', 'Enter');
      await page.locator('#keys-table tbody tr').nth(2).waitFor();
      expect(await waitForText(page, '#status', /Signed in/)).toBe('Signed in.');

      // Chart of the key with usage: its bars, the limit line and the month's average.
      await page.getByRole('button', { name: 'Details: Website' }).click();
      await page.waitForSelector('#chart svg rect.bar.current[data-used="5"]');
      expect(await page.getAttribute('#chart svg line.limit', 'data-limit')).toBe('12');
      expect(await text(page, '#chart svg text.limit-label')).toBe('limit 12');
      expect(await text(page, '#chart [data-caption="0"]')).toBe(
        'This month so far (day 15 of 31): 5 requests, 0.3 per day on average.',
      );
      expect(await text(page, '#chart [data-caption="1"]')).toBe(
        "Dashed line: the plan's monthly limit of 12 requests, 0.4 per day on average.",
      );
      expect(
        await page.locator('#chart svg text.axis-label', { hasText: 'Mar 2026' }).count(),
      ).toBe(1);
      expect(await monthLabelsApart(page)).toBe(15);

      // This month per day: a column for each of its 31 days, the 15 so far drawn, today's
      // highlighted, the requests on the days they were made.
      expect(await text(page, '#days-heading')).toBe('This month, per day');
      expect(await page.locator('#day-chart svg rect.bar').count()).toBe(15);
      expect(await page.getAttribute('#day-chart svg rect.bar.current', 'data-date')).toBe(
        '2026-03-15',
      );
      expect(await usedPerDay(page)).toEqual({ '2026-03-10': WEBSITE_MARCH_ON_10TH });
      expect(await page.locator('#day-chart svg > title').textContent()).toBe(
        'Requests per day this month: Website',
      );
      expect(await page.locator('#day-chart svg desc').textContent()).toContain('Mar 10: 5');
      expect(await dayLabels(page)).toEqual(['1', '8', '15', '22', '29']);
      expect(await text(page, '#day-chart [data-caption="days"]')).toBe(
        'Today (Mar 15): 0 requests; the busiest day so far: 5. Days in the quota time zone.',
      );
      expect(await labelsApart(page, '#day-chart')).toBe(8);

      // No sideways scrolling; every control in the window and clickable; sign-out seen.
      const overflow = await horizontalOverflow(page);
      expect(overflow.scrollWidth, JSON.stringify(overflow)).toBeLessThanOrEqual(width);
      await page.evaluate('window.scrollTo(0, 0)');
      expect(await page.locator('#sign-out').isVisible()).toBe(true);
      expect(await page.locator('#sign-out').boundingBox()).toMatchObject({
        y: expect.any(Number),
      });
      expect(
        await expectReachable(
          page,
          '#sign-out, #language, .topbar a, #console-view button, #console-view summary, #console-view select, #console-view input, #console-view textarea',
        ),
      ).toBeGreaterThanOrEqual(20);
      await page.evaluate('window.scrollTo(0, 0)');
      await matchesBaseline(page, `console-${width}-en`);

      // German: the banner, the table, the chart's labels and its caption all follow.
      await page.selectOption('#language', 'de');
      expect(await text(page, '#status')).toBe('Angemeldet.');
      expect(await text(page, '#keys-heading')).toBe('Schlüssel');
      expect(await text(page, '#chart svg text.limit-label')).toBe('Limit 12');
      expect(await page.locator('#chart svg title').textContent()).toBe(
        'Anfragen pro Monat: Website',
      );
      for (const label of ['Okt. 2025', 'Dez. 2025', 'März 2026']) {
        expect(
          await page.locator('#chart svg text.axis-label', { hasText: label }).count(),
          label,
        ).toBe(1);
      }
      expect(await text(page, '#chart [data-caption="0"]')).toMatch(
        /^Dieser Monat bis heute \(Tag 15 von 31\): 5 Anfragen, im Schnitt 0,3 pro Tag\./,
      );
      expect(await monthLabelsApart(page)).toBe(15);
      expect(await text(page, '#days-heading')).toBe('Dieser Monat, pro Tag');
      expect(await page.locator('#day-chart svg > title').textContent()).toBe(
        'Anfragen pro Tag in diesem Monat: Website',
      );
      expect(await dayLabels(page)).toEqual(['1', '8', '15', '22', '29']);
      expect(await text(page, '#day-chart [data-caption="days"]')).toBe(
        'Heute (15. März): 0 Anfragen; der bisher stärkste Tag: 5. Tage in der Zeitzone des Kontingents.',
      );
      expect(await labelsApart(page, '#day-chart')).toBe(8);
      expect((await horizontalOverflow(page)).scrollWidth).toBeLessThanOrEqual(width);
      // No English left in the page's text (key names and codes aside).
      const visible = await inPage<string>(page, 'document.body.innerText');
      for (const english of [
        'Signed in',
        'Usage this month',
        'Actions',
        'limit 12',
        'Rotate',
        'Revoke',
      ]) {
        expect(visible, english).not.toContain(english);
      }
      await page.evaluate('window.scrollTo(0, 0)');
      await matchesBaseline(page, `console-${width}-de`);

      // A new key is shown whole, `plauder_` first, inside the window.
      await page.selectOption('#language', 'en');
      expect(await text(page, '#status')).toBe('Signed in.');
      await page.click('#new-key');
      await page.fill('#create-name', 'Phone test');
      await page.click('#create-dialog button[type="submit"]');
      await page.locator('#secret-dialog').waitFor({ state: 'visible' });
      const key = await page.inputValue('#secret-value');
      expect(key).toMatch(/^plauder_[A-Za-z0-9]{38}$/);
      const field = await inPage<{
        scrollLeft: number;
        scrollTop: number;
        scrollWidth: number;
        clientWidth: number;
        scrollHeight: number;
        clientHeight: number;
        left: number;
        right: number;
      }>(
        page,
        `(() => {
           const f = document.getElementById('secret-value');
           const r = f.getBoundingClientRect();
           return { scrollLeft: f.scrollLeft, scrollTop: f.scrollTop, scrollWidth: f.scrollWidth,
             clientWidth: f.clientWidth, scrollHeight: f.scrollHeight, clientHeight: f.clientHeight,
             left: r.left, right: r.right };
         })()`,
      );
      expect(field.scrollLeft).toBe(0);
      expect(field.scrollTop).toBe(0);
      expect(field.scrollWidth, JSON.stringify(field)).toBeLessThanOrEqual(field.clientWidth);
      expect(field.scrollHeight, JSON.stringify(field)).toBeLessThanOrEqual(field.clientHeight);
      expect(field.left).toBeGreaterThanOrEqual(0);
      expect(field.right).toBeLessThanOrEqual(width);
      await expectReachable(page, '#secret-dialog button');
      await page.click('#secret-dialog button[type="submit"]');
      await page.locator('#secret-dialog').waitFor({ state: 'hidden' });

      // Sign-out works from the top of the page at this width.
      await page.evaluate('window.scrollTo(0, 0)');
      await page.click('#sign-out');
      await page.locator('#sign-in-view').waitFor({ state: 'visible' });
      expect((await horizontalOverflow(page)).scrollWidth).toBeLessThanOrEqual(width);

      expect(seen.unexpectedErrors()).toEqual([]);
      expect(seen.foreign).toEqual([]);
    } finally {
      await context.close();
      await s.close();
    }
  });
});

/** How many keys the operator below has. */
const MANY = 10_000;
/** The key the operator looks for among them. */
const NEEDLE = 'Needle customer 4711';

/**
 * `count` keys written straight into the server's database in one transaction (through
 * the API this would take minutes), created a second apart, one of them named NEEDLE.
 */
async function seedKeys(s: TestServer, count: number): Promise<void> {
  const store = await createStore(s.config.database);
  const teams = ['Berlin', 'Hamburg', 'Köln', 'Wien', 'Zürich', 'Basel', 'Graz', 'Bern'];
  const kinds = ['shop', 'bot', 'support', 'mobile app', 'crm', 'intranet', 'agent'];
  try {
    await store.db.transaction().execute(async (trx) => {
      for (let start = 0; start < count; start += 500) {
        const rows = [];
        for (let i = start; i < Math.min(start + 500, count); i++) {
          const key = generateKey();
          const name = i === 4711 ? NEEDLE : `${teams[i % 8]} ${kinds[i % 7]} ${i}`;
          const createdAt = NOW - (count - i) * 1000;
          rows.push({ id: `key_${i.toString(36).padStart(16, '0')}`, key, name, createdAt, i });
        }
        await trx
          .insertInto('api_keys')
          .values(
            rows.map((r) => ({
              id: r.id,
              name: r.name,
              plan: r.i % 3 === 0 ? 'plus' : 'standard',
              active: 1,
              created_at: r.createdAt,
              updated_at: r.createdAt,
              revoked_at: null,
            })),
          )
          .execute();
        await trx
          .insertInto('key_secrets')
          .values(
            rows.map((r) => ({
              hash: hashKey(r.key),
              key_id: r.id,
              display_prefix: displayPrefix(r.key),
              created_at: r.createdAt,
              expires_at: null,
            })),
          )
          .execute();
      }
    });
  } finally {
    await store.close();
  }
}

// Each width has a server of its own: the test changes keys.
describe('the console and token budgets', () => {
  it("shows a key's tokens beside its requests where its plan has a token budget", async () => {
    // A plan with a token budget (docs/quota-and-limits.md, "Token budgets") beside the default.
    const s = await startAdminServer({
      env: { PLAUDER_PLANS: 'standard=1000,metered=1000/month+20000tokens/month' },
    });
    try {
      const metered = await s.createKey({ name: 'Metered', plan: 'metered' });
      await s.createKey({ name: 'Counted', plan: 'standard' });
      expect((await chat(s, metered.key, { message: 'Hallo' })).status).toBe(200);
      const context = await browser.newContext({ locale: 'en-US' });
      const page = await context.newPage();
      const seen = watch(page);
      await page.goto(`${s.url}/admin/`);
      await page.evaluate("localStorage.setItem('plauder.language', 'en')");
      await page.fill('#admin-token', ADMIN_TOKEN);
      await page.press('#admin-token', 'Enter');
      const row = page.locator('#keys-table tbody tr', { hasText: 'Metered' });
      await expect
        .poll(() => row.locator('[data-field="tokens"]').textContent())
        .toMatch(/^tokens: [1-9][\d,]* \/ 20,000$/);
      const plain = page.locator('#keys-table tbody tr', { hasText: 'Counted' });
      expect(await plain.locator('[data-field="tokens"]').count()).toBe(0);
      expect(seen.unexpectedErrors()).toEqual([]);
      await context.close();
    } finally {
      await s.close();
    }
  });
});

describe('the console with 10 000 keys', () => {
  it.each([
    { width: 1280, height: 900, rowHeight: 48, pageHeight: 6_000 },
    { width: 375, height: 812, rowHeight: 90, pageHeight: 8_000 },
  ])(
    'at $width px: pages of compact rows, a key found by name and deactivated within a second, one row redrawn',
    async ({ width, height, rowHeight, pageHeight }) => {
      const many = await startAdminServer({
        clock: () => NOW,
        env: { PLAUDER_QUOTA_TIMEZONE: 'UTC' },
      });
      await seedKeys(many, MANY);
      const context = await browser.newContext({
        locale: 'en-US',
        timezoneId: 'UTC',
        viewport: { width, height },
        deviceScaleFactor: 1,
        reducedMotion: 'reduce',
      });
      try {
        const page = await context.newPage();
        const seen = watch(page);
        await page.goto(`${many.url}/admin/`);
        await page.evaluate("localStorage.setItem('plauder.language', 'en')");
        await page.fill('#admin-token', ADMIN_TOKEN);
        await page.press('#admin-token', 'Enter');
        const rows = page.locator('#keys-table tbody tr');
        await expect.poll(() => rows.count()).toBe(50);
        expect(await text(page, '#keys-range')).toBe('1–50 of 10,000');

        // A page of 50 compact rows: the page stays short and nothing scrolls sideways.
        const first = await rows.first().boundingBox();
        expect(first?.height, JSON.stringify(first)).toBeLessThanOrEqual(rowHeight);
        const size = await inPage<{ scrollHeight: number; scrollWidth: number }>(
          page,
          '({ scrollHeight: document.scrollingElement.scrollHeight, scrollWidth: document.scrollingElement.scrollWidth })',
        );
        expect(size.scrollHeight, JSON.stringify(size)).toBeLessThanOrEqual(pageHeight);
        expect(size.scrollWidth, JSON.stringify(size)).toBeLessThanOrEqual(width);
        await shot(page, `many-keys-${width}`);

        // Paging forward and back.
        await page.click('#keys-next');
        await waitForText(page, '#keys-range', /^51–100 of 10,000$/);
        await page.click('#keys-prev');
        await waitForText(page, '#keys-range', /^1–50 of 10,000$/);

        // Deactivating a key redraws its row only: the row below is the same element.
        await page.evaluate(
          "document.querySelectorAll('#keys-table tbody tr')[1].dataset.untouched = 'yes'",
        );
        const top = rows.first();
        const topName = (await top.locator('th').textContent()) ?? '';
        await rowAction(top, `Deactivate: ${topName}`);
        await expect
          .poll(() => text(page, '#keys-table tbody tr:first-child [data-field="status"]'))
          .toBe('inactive');
        expect(await rows.nth(1).getAttribute('data-untouched')).toBe('yes');
        expect(await rows.count()).toBe(50);

        // Find the key by name and deactivate it: the row shows it within a second.
        await page.fill('#keys-search', 'needle');
        await expect.poll(() => rows.count()).toBe(1);
        const needle = page.locator('tr', { hasText: NEEDLE });
        expect(await text(page, '#keys-range')).toBe('1–1 of 1');
        await shot(page, `many-keys-${width}-found`);
        await needle.locator('details.menu > summary').click();
        const clicked = Date.now();
        await needle.getByRole('menuitem', { name: `Deactivate: ${NEEDLE}` }).click();
        await needle.locator('[data-field="status"]', { hasText: 'inactive' }).waitFor();
        const elapsed = Date.now() - clicked;
        expect(elapsed).toBeLessThan(1_000);
        expect(await waitForText(page, '#status', /deactivated/)).toBe(
          `Key "${NEEDLE}" deactivated.`,
        );
        // The server holds it, and the filter for inactive keys finds it.
        const stored = await admin(many, `keys?q=${encodeURIComponent(NEEDLE)}`);
        expect(stored.json.keys[0]).toMatchObject({ name: NEEDLE, active: false });
        await page.fill('#keys-search', '');
        await page.selectOption('#keys-active', 'false');
        await expect.poll(() => text(page, '#keys-range')).toBe('1–2 of 2');

        // Its details open from its row: the charts and the actions of that key alone.
        await page.getByRole('button', { name: `Details: ${NEEDLE}` }).click();
        await page.waitForSelector('#chart svg rect.bar', { state: 'attached' });
        expect(await text(page, '#key-detail h3')).toBe(NEEDLE);
        expect(await page.locator('#key-detail [data-detail-action="toggle"]').textContent()).toBe(
          'Activate',
        );
        await shot(page, `many-keys-${width}-detail`);
        expect(seen.unexpectedErrors()).toEqual([]);
        expect(seen.foreign).toEqual([]);
      } finally {
        await context.close();
        await many.close();
      }
    },
  );
});
