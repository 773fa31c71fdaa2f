import { describe, expect, it } from 'vitest';
import { CoreSlots, KeyPlaces, type Place, type Waited } from '../../src/chat/fair-share.js';

const LIMITS = { max: 2, queue: 3, timeoutMs: 60_000 };

/** A wait whose outcome the test reads once it has settled (undefined while waiting). */
function watch(waiting: Promise<Waited>) {
  const seen: { value?: Waited } = {};
  void waiting.then((value) => {
    seen.value = value;
  });
  return seen;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

function placeOf(waited: Waited | undefined): Place {
  if (!waited?.ok) throw new Error(`expected a place, got ${JSON.stringify(waited)}`);
  return waited.place;
}

describe('KeyPlaces', () => {
  it('hands places to waiting turns in the order they came, and never lets a new one overtake', async () => {
    const places = new KeyPlaces();
    const signal = new AbortController().signal;
    const first = placeOf(await places.wait('a', LIMITS, signal));
    placeOf(await places.wait('a', LIMITS, signal));
    const second = watch(places.wait('a', LIMITS, signal));
    const third = watch(places.wait('a', LIMITS, signal));
    await tick();
    expect(second.value).toBeUndefined();
    expect(places.tryTake('a', LIMITS.max)).toBeUndefined();

    first.release();
    first.release(); // a second release gives nothing back twice
    await tick();
    expect(second.value?.ok).toBe(true);
    expect(third.value).toBeUndefined();
    expect(places.running('a')).toBe(2);
  });

  it('refuses at once past the queue, and another key is never held up', async () => {
    const places = new KeyPlaces();
    const signal = new AbortController().signal;
    const limits = { max: 1, queue: 1, timeoutMs: 60_000 };
    placeOf(await places.wait('a', limits, signal));
    const waiting = watch(places.wait('a', limits, signal));
    const refused = await places.wait('a', limits, signal);
    expect(refused).toMatchObject({ ok: false, why: 'queue_full' });
    expect((await places.wait('b', limits, signal)).ok).toBe(true);
    await tick();
    expect(waiting.value).toBeUndefined();
  });

  it('drops a waiting turn whose client leaves, and one that waited too long', async () => {
    const places = new KeyPlaces();
    const held = placeOf(await places.wait('a', LIMITS, new AbortController().signal));
    placeOf(await places.wait('a', LIMITS, new AbortController().signal));
    const client = new AbortController();
    const leaving = watch(places.wait('a', LIMITS, client.signal));
    const slow = await places.wait('a', { ...LIMITS, timeoutMs: 5 }, client.signal);
    expect(slow).toMatchObject({ ok: false, why: 'timeout' });
    client.abort();
    await tick();
    expect(leaving.value).toMatchObject({ ok: false, why: 'gone' });

    // Nobody waits any more: the place given back is free.
    held.release();
    expect(places.running('a')).toBe(1);
  });
});

describe('CoreSlots', () => {
  it('lets one key alone use the whole pool', async () => {
    const slots = new CoreSlots(8);
    const signal = new AbortController().signal;
    const all = await Promise.all(Array.from({ length: 8 }, () => slots.wait('a', 1000, signal)));
    expect(all.every((waited) => waited.ok && waited.waitedMs === 0)).toBe(true);
  });

  it('keeps the reserve for a key below its share while a tenant of twenty keys fills the pool', async () => {
    const slots = new CoreSlots(64);
    const signal = new AbortController().signal;
    // Twenty keys with sixteen turns each: 320 turns for 64 slots.
    const tenant = Array.from({ length: 20 }, (_, k) =>
      Array.from({ length: 16 }, () => watch(slots.wait(`t${k}`, 60_000, signal))),
    ).flat();
    await tick();
    // The first keys came alone and took what was free; their turns end together.
    const firstWave = tenant.filter((seen) => seen.value?.ok);
    expect(firstWave).toHaveLength(64);
    for (const seen of firstWave) placeOf(seen.value).release();
    await tick();
    // The slots went to the keys that held fewest, and the reserve is free.
    const running = tenant.filter((seen) => seen.value?.ok).length - firstWave.length;
    expect(running).toBeGreaterThanOrEqual(56);
    expect(running).toBeLessThan(64);

    const other = await slots.wait('other', 60_000, signal);
    expect(other).toMatchObject({ ok: true, waitedMs: 0 });
  });

  it('gives a freed slot to the waiting key that holds the fewest', async () => {
    const slots = new CoreSlots(4);
    const signal = new AbortController().signal;
    const heavy = await Promise.all(Array.from({ length: 3 }, () => slots.wait('a', 1000, signal)));
    const light = placeOf(await slots.wait('b', 1000, signal));
    const heavyNext = watch(slots.wait('a', 60_000, signal));
    const lightNext = watch(slots.wait('b', 60_000, signal));
    placeOf(heavy[0]).release();
    await tick();
    expect(lightNext.value?.ok).toBe(true);
    expect(heavyNext.value).toBeUndefined();
    light.release();
    await tick();
    expect(heavyNext.value?.ok).toBe(true);
  });

  it('serves waiting keys in rotation, however many turns one of them has waiting', async () => {
    const slots = new CoreSlots(1);
    const signal = new AbortController().signal;
    const first = placeOf(await slots.wait('a', 60_000, signal));
    const many = Array.from({ length: 5 }, () => watch(slots.wait('a', 60_000, signal)));
    const late = watch(slots.wait('b', 60_000, signal));
    first.release();
    await tick();
    // One of `a`'s turns came first, then `b`'s, although four more of `a` came before it.
    expect(many[0]?.value?.ok).toBe(true);
    expect(late.value).toBeUndefined();
    placeOf(many[0]?.value).release();
    await tick();
    expect(late.value?.ok).toBe(true);
    expect(many[1]?.value).toBeUndefined();
  });
});
