/**
 * Fills a plauder database (SQLite, or PostgreSQL through Kysely) for the benchmarks, fast: one bench key through the real
 * key service, then (optionally) many more keys and many full sessions written with plain
 * SQL in one transaction, using plauder's own key format, hashing and turn sealer from
 * dist/. Needs `npm run build` first.
 *
 *   PLAUDER_DATABASE_URL=sqlite:/tmp/b.db PLAUDER_SECRET=$(openssl rand -base64 32) \
 *   PLAUDER_PLANS=standard=1000,plus=5000,bench=1000000000 \
 *   node bench/tools/seed-database.mjs --keys 100000 --sessions 10000 [--turns 20]
 *     [--usage-months 12]
 *
 * PLAUDER_SECRET is required and must be the server's: sessions are sealed with it.
 * The turns are what the built-in core answers to MESSAGE, asked TURNS times in a row,
 * the same history a client asking that question would have built.
 * The bench key has all the sessions (ids `<prefix>0` … `<prefix>N-1`); the other keys
 * each get a usage row for this month. `--usage-months N` gives every key, the bench key too,
 * the N months before this one as well, each with its usage row and a row for every day of
 * it (`usage_days`), as a key used every day would have. After writing, the script reads one session back
 * through the session service and authenticates a seeded key, so a seed the server could
 * not read fails here.
 *
 * Prints one JSON line: {"key","keyId","sessionPrefix","keys","sessions","turns","message","ms"}.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { loadConfig } from '../../dist/config/config.js';
import { displayPrefix, generateKey, hashKey } from '../../dist/keys/key-format.js';
import { createServices } from '../../dist/services.js';
import { sealWindow } from '../../dist/sessions/session-service.js';
import { createTurnSealer } from '../../dist/sessions/turn-sealer.js';
import { createStore } from '../../dist/storage/create-database.js';
import { loadSecret } from '../../dist/storage/secret.js';
import { conversation, MESSAGE } from '../lib/conversation.mjs';

const { values } = parseArgs({
  options: {
    keys: { type: 'string', default: '1' },
    sessions: { type: 'string', default: '0' },
    turns: { type: 'string', default: '20' },
    plan: { type: 'string', default: 'bench' },
    'session-prefix': { type: 'string', default: 'bench-' },
    'usage-months': { type: 'string', default: '0' },
  },
});
const keyCount = count('keys', 1);
const sessionCount = count('sessions', 0);
const turnCount = count('turns', 1);
const usageMonths = count('usage-months', 0);
const prefix = values['session-prefix'];

function count(name, min) {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name}: integer ≥ ${min}`);
  return value;
}

const started = performance.now();
const config = loadConfig(process.env);
if (config.secret.kind !== 'value') {
  throw new Error('seed: set PLAUDER_SECRET, the same for the seeder and the server');
}
if (!config.plans.has(values.plan))
  throw new Error(`seed: plan "${values.plan}" is not in PLAUDER_PLANS`);
const secret = loadSecret(config.secret);
const store = await createStore(config.database);
const services = createServices(config, store, secret, Date.now);
try {
  const issued = await services.keys.create({ name: 'bench', plan: values.plan });
  if (!issued.ok) throw new Error(`seed: bench key not created: ${issued.problem}`);
  const { id: keyId, key } = issued.value;
  const now = Date.now();
  const turns = await conversation(turnCount);
  const month = services.quota.monthOf(now).month;
  const seed = {
    keyId,
    now,
    month,
    turns,
    sealer: createTurnSealer(secret),
    past: pastMonths(month, usageMonths),
  };
  const otherKey =
    config.database.dialect === 'sqlite'
      ? bulkInsert(config.database.file, seed)
      : await bulkInsertWithKysely(store.db, seed);
  await verify(keyId, otherKey, turns, now);
  const ms = Math.round(performance.now() - started);
  process.stdout.write(
    `${JSON.stringify({ key, keyId, sessionPrefix: prefix, keys: keyCount, sessions: sessionCount, turns: turnCount, usageMonths, message: MESSAGE, ms })}\n`,
  );
} finally {
  await store.close();
}

function bulkInsert(file, { keyId, now, month, turns, sealer, past }) {
  const db = new Database(file, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const insertKey = db.prepare(
    'insert into api_keys (id, name, plan, active, created_at, updated_at, revoked_at) values (?, ?, ?, 1, ?, ?, null)',
  );
  const insertSecret = db.prepare(
    'insert into key_secrets (hash, key_id, display_prefix, created_at, expires_at) values (?, ?, ?, ?, null)',
  );
  const insertUsage = db.prepare('insert into usage (key_id, month, used) values (?, ?, ?)');
  const insertDay = db.prepare('insert into usage_days (key_id, day, used) values (?, ?, ?)');
  const insertPast = (id) => {
    for (const { month: earlier, used, days } of past) {
      insertUsage.run(id, earlier, used);
      for (const day of days) insertDay.run(id, day.day, day.used);
    }
  };
  const insertSession = db.prepare(
    'insert into sessions (key_id, session_hash, created_at, last_active_at, turn_count, sealed_window) values (?, ?, ?, ?, ?, ?)',
  );
  const plan = config.plans.has('standard') ? 'standard' : values.plan;
  let lastKey;
  db.transaction(() => {
    for (let i = 1; i < keyCount; i++) {
      const id = newKeyId();
      lastKey = generateKey();
      insertKey.run(id, `seed-${i}`, plan, now, now);
      insertSecret.run(hashKey(lastKey), id, displayPrefix(lastKey), now);
      insertUsage.run(id, month, i % 1000);
      insertPast(id);
    }
    insertPast(keyId);
    for (let s = 0; s < sessionCount; s++) {
      const hash = sealer.sessionHash(keyId, `${prefix}${s}`);
      // The window exactly as the session service writes it; verify() reads it back.
      const window = turns.map((turn) => ({ ...turn, createdAt: now }));
      // SQLite keeps the sealed bytes as they are (src/storage/sealed-column.ts).
      const sealed = sealWindow(sealer, keyId, hash, turns.length, window);
      insertSession.run(keyId, hash, now, now, turns.length, sealed);
    }
  })();
  db.close();
  return lastKey;
}

/** PostgreSQL: the same rows through Kysely, in one transaction, a batch at a time. */
async function bulkInsertWithKysely(db, { keyId, now, month, turns, sealer, past }) {
  const BATCH = 1000;
  const plan = config.plans.has('standard') ? 'standard' : values.plan;
  let lastKey;
  await db.transaction().execute(async (trx) => {
    for (let start = 1; start < keyCount; start += BATCH) {
      const keys = [];
      for (let i = start; i < Math.min(start + BATCH, keyCount); i++) {
        lastKey = generateKey();
        keys.push({ id: newKeyId(), i, key: lastKey });
      }
      await trx
        .insertInto('api_keys')
        .values(
          keys.map((k) => ({
            id: k.id,
            name: `seed-${k.i}`,
            plan,
            active: 1,
            created_at: now,
            updated_at: now,
            revoked_at: null,
          })),
        )
        .execute();
      await trx
        .insertInto('key_secrets')
        .values(
          keys.map((k) => ({
            hash: hashKey(k.key),
            key_id: k.id,
            display_prefix: displayPrefix(k.key),
            created_at: now,
            expires_at: null,
          })),
        )
        .execute();
      await trx
        .insertInto('usage')
        .values(keys.map((k) => ({ key_id: k.id, month, used: k.i % 1000 })))
        .execute();
      for (const k of keys) await insertPastWithKysely(trx, k.id, past);
    }
    await insertPastWithKysely(trx, keyId, past);
    const window = turns.map((turn) => ({ ...turn, createdAt: now }));
    for (let start = 0; start < sessionCount; start += BATCH) {
      const rows = [];
      for (let s = start; s < Math.min(start + BATCH, sessionCount); s++) {
        const hash = sealer.sessionHash(keyId, `${prefix}${s}`);
        // PostgreSQL keeps sealed values as base64url text (src/storage/sealed-column.ts).
        const sealed = sealWindow(sealer, keyId, hash, turns.length, window).toString('base64url');
        rows.push({
          key_id: keyId,
          session_hash: hash,
          created_at: now,
          last_active_at: now,
          turn_count: turns.length,
          sealed_window: sealed,
        });
      }
      await trx.insertInto('sessions').values(rows).execute();
    }
  });
  return lastKey;
}

async function insertPastWithKysely(trx, keyId, past) {
  if (past.length === 0) return;
  await trx
    .insertInto('usage')
    .values(past.map(({ month, used }) => ({ key_id: keyId, month, used })))
    .execute();
  const days = past.flatMap((m) => m.days.map(({ day, used }) => ({ key_id: keyId, day, used })));
  await trx.insertInto('usage_days').values(days).execute();
}

/**
 * The `n` months before `month` (`YYYY-MM`), oldest first, each with a count for every one of
 * its days (1 to 40 requests a day) and their sum as the month's.
 */
function pastMonths(month, n) {
  const [year, index] = month.split('-').map(Number);
  const months = [];
  for (let back = n; back >= 1; back--) {
    const first = new Date(Date.UTC(year, index - 1 - back, 1));
    const y = first.getUTCFullYear();
    const m = first.getUTCMonth();
    const length = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
    const label = `${y}-${String(m + 1).padStart(2, '0')}`;
    const days = Array.from({ length }, (_, d) => ({
      day: `${label}-${String(d + 1).padStart(2, '0')}`,
      used: 1 + ((d * 7 + back) % 40),
    }));
    months.push({ month: label, used: days.reduce((sum, d) => sum + d.used, 0), days });
  }
  return months;
}

/** Public, not secret: `key_` + 16 base36 characters, as the key service makes them. */
function newKeyId() {
  const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';
  let id = 'key_';
  for (const byte of randomBytes(16)) id += alphabet[byte % 36];
  return id;
}

async function verify(keyId, otherKey, turns, now) {
  if (sessionCount > 0) {
    for (const s of [0, sessionCount - 1]) {
      const { history } = await services.sessions.open(keyId, `${prefix}${s}`, now);
      const same =
        history.length === turns.length &&
        history.every((t, i) => t.message === turns[i]?.message && t.reply === turns[i]?.reply);
      if (!same) {
        throw new Error(
          `seed: session ${prefix}${s} reads back ${history.length} of ${turns.length} turns (sealing drifted from the session service?)`,
        );
      }
    }
  }
  if (usageMonths > 0) {
    const expected = pastMonths(services.quota.monthOf(now).month, usageMonths);
    const days = await store.db
      .selectFrom('usage_days')
      .where('key_id', '=', keyId)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const wanted = expected.reduce((n, m) => n + m.days.length, 0);
    if (Number(days.n) !== wanted) {
      throw new Error(`seed: ${days.n} days of usage for the bench key, expected ${wanted}`);
    }
  }
  if (otherKey !== undefined) {
    const auth = await services.keys.authenticate(`Bearer ${otherKey}`);
    if (!auth) throw new Error('seed: a seeded key does not authenticate');
  }
}
