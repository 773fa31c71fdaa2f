/**
 * @module operations/list-query
 * Paging and search of the admin lists, for `GET /admin/v1/keys`, `GET /admin/v1/usage` and
 * `plauder keys list` alike (docs/admin.md, "Lists: paging, search, filters"). A cursor is
 * opaque to clients: the sort and the (sort key, id) of a page's last key, so the next page
 * starts right after it, whatever was inserted or changed meanwhile.
 */
import {
  KEY_SORTS,
  type KeyFilter,
  type KeyRecord,
  type KeySearch,
  type KeySort,
} from '../storage/repositories/keys-repository.js';

export { KEY_SORTS, type KeySort };

export const LIST_LIMIT_DEFAULT = 50;
export const LIST_LIMIT_MAX = 500;

export interface ListQuery {
  readonly limit?: number;
  readonly cursor?: string;
  readonly q?: string;
  readonly plan?: string;
  readonly active?: boolean;
  readonly sort?: KeySort;
}

/** How a list answer was cut: `total` keys match, `nextCursor` is null on the last page. */
export interface ListPage {
  readonly limit: number;
  readonly total: number;
  readonly nextCursor: string | null;
}

export type ListOutcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly problem: 'invalid_cursor' };

/**
 * The repository's search for `query`, asking one key more than the page holds (to know
 * whether another page follows); undefined when the cursor is not one of ours for this sort.
 */
export function keySearch(
  query: ListQuery,
  existedIn?: KeyFilter['existedIn'],
): { search: KeySearch; limit: number } | undefined {
  const sort = query.sort ?? 'created';
  const limit = Math.min(query.limit ?? LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX);
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, sort);
  if (after === null) return undefined;
  const filter: KeyFilter = {
    ...(query.q === undefined || query.q.trim() === '' ? {} : { q: query.q }),
    ...(query.plan === undefined ? {} : { plan: query.plan }),
    ...(query.active === undefined ? {} : { active: query.active }),
    ...(existedIn === undefined ? {} : { existedIn }),
  };
  return { search: { ...filter, sort, limit: limit + 1, ...(after ? { after } : {}) }, limit };
}

/** The page's keys (at most `limit` of `found`) and how the list goes on. */
export function cutPage(
  found: readonly KeyRecord[],
  limit: number,
  total: number,
  sort: KeySort = 'created',
): { records: KeyRecord[]; page: ListPage } {
  const records = found.slice(0, limit);
  const last = records.at(-1);
  const nextCursor = found.length > limit && last ? encodeCursor(sort, last) : null;
  return { records, page: { limit, total, nextCursor } };
}

function encodeCursor(sort: KeySort, key: KeyRecord): string {
  const value = sort.endsWith('name') ? key.name : key.createdAt;
  return Buffer.from(JSON.stringify([sort, value, key.id])).toString('base64url');
}

/** The position a cursor names; null when it is not a cursor of this sort. */
function decodeCursor(cursor: string, sort: KeySort): KeySearch['after'] | null {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(decoded) || decoded.length !== 3) return null;
    const [from, value, id] = decoded as unknown[];
    const valueType = sort.endsWith('name') ? 'string' : 'number';
    if (from !== sort || typeof value !== valueType || typeof id !== 'string') return null;
    return { value: value as string | number, id };
  } catch {
    return null;
  }
}

/** Every page of `query` in turn (the CLI lists all keys unless given a limit). */
export async function everyPage<P extends { readonly page: ListPage }>(
  query: ListQuery,
  read: (query: ListQuery) => Promise<ListOutcome<P>>,
): Promise<ListOutcome<P[]>> {
  const pages: P[] = [];
  let cursor = query.cursor;
  do {
    const outcome = await read({ ...query, limit: LIST_LIMIT_MAX, ...(cursor ? { cursor } : {}) });
    if (!outcome.ok) return outcome;
    pages.push(outcome.value);
    cursor = outcome.value.page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return { ok: true, value: pages };
}
