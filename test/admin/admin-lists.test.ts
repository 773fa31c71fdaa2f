/**
 * The admin lists (docs/admin.md, "Lists: paging, search, filters"): `GET /admin/v1/keys`
 * and `GET /admin/v1/usage` in pages after an opaque cursor, searched and filtered, with
 * totals; bad parameters are refused naming them; `plauder keys list` finds the same keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { chat, type TestServer } from '../helpers/test-server.js';
import { admin, startAdminServer } from './admin-client.js';

const START = Date.UTC(2026, 10, 10, 12);
const clock = { now: START };
let server: TestServer;
/** The keys created below, oldest first. */
const created: Array<{ id: string; key: string; name: string; plan: string }> = [];

const NAMES = ['Zeta shop', 'alpha bot', 'Beta Bot', 'gamma', 'delta_bot', 'epsilon', 'Omega'];

beforeAll(async () => {
  server = await startAdminServer({ clock: () => clock.now });
  for (const [i, name] of NAMES.entries()) {
    clock.now = START + i * 1000;
    const plan = i % 3 === 0 ? 'plus' : 'standard';
    const res = await admin(server, 'keys', { body: { name, plan, active: i !== 4 } });
    expect(res.status, res.text).toBe(201);
    created.push({ id: res.json.id, key: res.json.key, name, plan });
  }
  clock.now = START + 60_000;
});
afterAll(() => server.close());

interface ListAnswer {
  keys: Array<{ id: string; name: string; plan: string; active: boolean; used?: number }>;
  page: { limit: number; total: number; nextCursor: string | null };
  total?: number;
}

async function list(path: string): Promise<ListAnswer> {
  const res = await admin(server, path);
  expect(res.status, res.text).toBe(200);
  return res.json as ListAnswer;
}

/** Every page of `path` in turn, following `nextCursor`. */
async function allPages(path: string, limit: number): Promise<ListAnswer[]> {
  const pages: ListAnswer[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const after: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const page = await list(`${path}${sep}limit=${limit}${after}`);
    pages.push(page);
    cursor = page.page.nextCursor;
  } while (cursor !== null);
  return pages;
}

const names = (answer: ListAnswer) => answer.keys.map((k) => k.name);

describe('GET /admin/v1/keys in pages', () => {
  it('answers 50 keys by default, oldest first, with the total and no next page', async () => {
    const answer = await list('keys');
    expect(names(answer)).toEqual(NAMES);
    expect(answer.page).toEqual({ limit: 50, total: 7, nextCursor: null });
  });

  it('walks every key exactly once with the cursor, also when keys are created between pages', async () => {
    const first = await list('keys?limit=3');
    expect(names(first)).toEqual(NAMES.slice(0, 3));
    expect(first.page.total).toBe(7);
    // A key created after the first page comes last in the default order: no key is
    // repeated or skipped.
    clock.now = START + 120_000;
    const late = await admin(server, 'keys', { body: { name: 'late key', plan: 'standard' } });
    expect(late.status).toBe(201);
    try {
      const rest = [];
      let cursor = first.page.nextCursor;
      while (cursor !== null) {
        const page = await list(`keys?limit=3&cursor=${encodeURIComponent(cursor)}`);
        rest.push(...names(page));
        cursor = page.page.nextCursor;
      }
      expect([...names(first), ...rest]).toEqual([...NAMES, 'late key']);
    } finally {
      await admin(server, `keys/${late.json.id}/revoke`, { method: 'POST' });
    }
  });

  it('sorts by name and by creation, both ways, across pages', async () => {
    const live = (answer: ListAnswer[]) =>
      answer.flatMap(names).filter((name) => NAMES.includes(name));
    const byName = [...NAMES].sort();
    expect(live(await allPages('keys?sort=name', 2))).toEqual(byName);
    expect(live(await allPages('keys?sort=-name', 2))).toEqual([...byName].reverse());
    expect(live(await allPages('keys?sort=-created', 2))).toEqual([...NAMES].reverse());
  });

  it('finds keys by part of the name in any case, by id and by key prefix', async () => {
    const bots = await list('keys?q=BOT');
    expect(names(bots)).toEqual(['alpha bot', 'Beta Bot', 'delta_bot']);
    expect(bots.page.total).toBe(3);
    // `_` is a character, not a wildcard: only "delta_bot" has one.
    expect(names(await list('keys?q=a_b'))).toEqual(['delta_bot']);
    const gamma = created[3];
    expect(names(await list(`keys?q=${gamma?.id.toUpperCase()}`))).toEqual(['gamma']);
    expect(names(await list(`keys?q=${gamma?.key.slice(0, 12)}`))).toEqual(['gamma']);
    expect(await list('keys?q=nothing-like-this')).toMatchObject({
      keys: [],
      page: { total: 0, nextCursor: null },
    });
  });

  it('filters by plan and by active, combined with the search and paging', async () => {
    expect(names(await list('keys?plan=plus'))).toEqual(['Zeta shop', 'gamma', 'Omega']);
    expect(names(await list('keys?active=false&q=bot'))).toEqual(['delta_bot']);
    const pages = await allPages('keys?plan=standard&active=true', 1);
    expect(pages.flatMap(names).filter((n) => NAMES.includes(n))).toEqual([
      'alpha bot',
      'Beta Bot',
      'epsilon',
    ]);
    expect(pages[0]?.page.total).toBe(pages.length);
  });

  // Each refusal names the parameter at fault (and an unknown one, those it takes).
  const refused: Array<[string, string, string]> = [
    ['limit=0', 'limit_invalid', '"limit"'],
    ['limit=501', 'limit_invalid', '"limit"'],
    ['limit=ten', 'limit_invalid', '"limit"'],
    ['cursor=not-a-cursor', 'cursor_invalid', '"cursor"'],
    ['sort=used', 'sort_invalid', '"sort"'],
    ['active=yes', 'active_invalid', '"active"'],
    [`q=${'x'.repeat(101)}`, 'search_invalid', '"q"'],
    ['page=2', 'query_unknown', 'limit, cursor, q'],
  ];
  it.each(refused)('?%s → 400 %s', async (query, code, named) => {
    for (const route of ['keys', 'usage']) {
      const res = await admin(server, `${route}?${query}`);
      expect(res.status, `${route}?${query}`).toBe(400);
      expect(res.json.error.code).toBe(code);
      expect(res.json.error.message).toContain(named);
    }
  });

  it('refuses a cursor of another sort order', async () => {
    const page = await list('keys?limit=2&sort=name');
    const res = await admin(server, `keys?sort=created&cursor=${page.page.nextCursor}`);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('cursor_invalid');
  });
});

describe('GET /admin/v1/usage in pages', () => {
  it('pages, searches and filters the month report; its total counts all matching keys', async () => {
    const [zeta, alpha] = created;
    for (let i = 0; i < 3; i++) await chat(server, zeta?.key ?? '', { message: 'Hallo' });
    await chat(server, alpha?.key ?? '', { message: 'Hallo' });

    const first = await list('usage?limit=1');
    expect(first.keys).toEqual([expect.objectContaining({ name: 'Zeta shop', used: 3 })]);
    expect(first.total).toBe(4);
    expect(first.page.total).toBeGreaterThanOrEqual(7);
    const second = await list(`usage?limit=1&cursor=${first.page.nextCursor}`);
    expect(second.keys).toEqual([expect.objectContaining({ name: 'alpha bot', used: 1 })]);

    const plus = await list('usage?plan=plus&q=zeta');
    expect(plus).toMatchObject({ total: 3, page: { total: 1 } });
    // A month before any key existed lists none.
    expect(await list('usage?month=2026-01')).toMatchObject({ keys: [], total: 0 });
  });
});

describe('plauder keys list --search --plan --limit', () => {
  it('lists the keys the admin API finds, and says how many of how many it shows', async () => {
    const run = (...args: string[]) => runCliInProcess(['keys', 'list', ...args], server.env);
    const bots = await run('--search', 'bot', '--json');
    expect(bots.code, bots.stderr).toBe(0);
    expect(JSON.parse(bots.stdout).map((k: { name: string }) => k.name)).toEqual([
      'alpha bot',
      'Beta Bot',
      'delta_bot',
    ]);
    const plus = await run('--plan', 'plus', '--limit', '2');
    expect(plus.code, plus.stderr).toBe(0);
    expect(plus.stdout).toContain('Zeta shop');
    expect(plus.stdout).toContain('gamma');
    expect(plus.stdout).not.toContain('Omega');
    expect(plus.stdout).toContain('2 of 3 keys shown.');
    const bad = await run('--limit', '0');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--limit');
  });
});
