/**
 * The console shows what issue 18 added: the current minute beside the month for a plan
 * with a per-minute limit, the plan's limits in the plan choices, and the events section
 * (receiver, counts, the latest events and their delivery). Headless Chromium against the
 * real server; a screenshot lands in test-output/console/.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, startTestServer, type TestServer } from '../helpers/test-server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const SHOTS = path.resolve('test-output/console');
const DIALECT = process.env.PLAUDER_TEST_DIALECT ?? 'sqlite';
const ADMIN_TOKEN = 'admin-token-for-the-console-events-test-0123';

let browser: Browser;
let server: TestServer;
let receiver: WebhookReceiver;

beforeAll(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  receiver = await startWebhookReceiver();
  server = await startTestServer({
    env: {
      PLAUDER_CORE: 'placeholder',
      PLAUDER_ADMIN_TOKEN: ADMIN_TOKEN,
      PLAUDER_PLANS: 'standard=1000,burst=5000/month+60/minute',
      PLAUDER_WEBHOOK_URL: receiver.url,
      PLAUDER_WEBHOOK_SECRET: receiver.secret,
      PLAUDER_WEBHOOK_POLL_INTERVAL: '50ms',
    },
  });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await receiver?.stop();
});

describe('the console with per-minute limits and events', () => {
  it('shows the minute beside the month, the plan limits and the delivered events', async () => {
    const { key } = await server.createKey({ plan: 'burst', name: 'Burst bot' });
    await server.createKey({ plan: 'standard', name: 'Plain bot' });
    for (let i = 0; i < 3; i++)
      expect((await chat(server, key, { message: `m${i}` })).status).toBe(200);
    await receiver.waitFor(() => receiver.accepted().length >= 2);

    const page = await browser.newPage({ locale: 'en-GB' });
    await page.goto(`${server.url}/admin/`);
    await page.fill('#admin-token', ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#keys-table tbody tr');

    // A key's name is a button in its row's header cell (it opens the key's details).
    const rowOf = (name: string) => page.locator('#keys-table tbody tr', { hasText: name });
    const minute = rowOf('Burst bot').locator('[data-field="minute"]');
    await expect.poll(() => minute.textContent()).toMatch(/this minute: [0-3] \/ 60/);
    expect(await rowOf('Plain bot').locator('[data-field="minute"]').count()).toBe(0);
    const choices = await page.locator('#create-plan option').allTextContents();
    expect(choices).toEqual(['standard (1,000 / month)', 'burst (5,000 / month, 60 / minute)']);

    await page.waitForSelector('#events-table tbody tr');
    expect(await page.locator('#events-section').isVisible()).toBe(true);
    await expect
      .poll(async () => page.locator('#events-counts').textContent())
      .toMatch(/Waiting: 0 · delivered: 2 · failed: 0/);
    expect(await page.locator('#events-receiver').textContent()).toContain(receiver.url);
    const rows = await page.locator('#events-table tbody tr').allTextContents();
    expect(rows).toHaveLength(2);
    expect(rows.every((row) => /key\.created.*delivered.*HTTP 204/.test(row))).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, `${DIALECT}-events.png`), fullPage: true });
    await page.close();
  });
});
