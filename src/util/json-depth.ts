/**
 * @module util/json-depth
 * How deeply a parsed JSON value nests, checked without recursion: a body parsed by
 * `JSON.parse` may nest far deeper than `JSON.stringify` or a schema walker can go back
 * down, so the front doors refuse what nests past a bound before anything else reads it.
 */

/** True when `value` has objects or arrays nested more than `max` levels deep. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (typeof item.value !== 'object' || item.value === null) continue;
    if (item.depth > max) return true;
    for (const child of Object.values(item.value)) {
      stack.push({ value: child, depth: item.depth + 1 });
    }
  }
  return false;
}
