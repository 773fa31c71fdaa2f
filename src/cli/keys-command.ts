/**
 * @module cli/keys-command
 * `plauder keys create | list | rotate | revoke | set-plan | activate | deactivate`, with
 * the admin API's rules and messages (plan names, names, grace up to 365d, revoked keys).
 */
import { loadConfig } from '../config/config.js';
import { ERROR_MESSAGES } from '../errors/error-codes.js';
import { parseGrace } from '../keys/grace.js';
import type { IssuedKey } from '../keys/key-service.js';
import {
  createKey,
  type KeyOutcome,
  listKeys as listKeyViews,
  revokeKey,
  rotateKey,
  updateKey,
} from '../operations/key-operations.js';
import { everyPage, LIST_LIMIT_MAX, type ListQuery } from '../operations/list-query.js';
import { describePlan } from '../plans/plans.js';
import type { Services } from '../services.js';
import { CliError, type CliIo, databaseName, withServices } from './cli-context.js';
import { type Command, type Parsed, usageError } from './command-line.js';
import { formatTable } from './format-table.js';

const ID = { name: 'ID', help: 'the key\'s id, key_..., as "plauder keys list" shows it' };
const JSON_OPTION = { type: 'boolean', help: 'print JSON instead of text' } as const;

/** The configured plans, for error messages: "standard (1000 per month), plus (...)". */
function planChoices(env: NodeJS.ProcessEnv): string[] {
  return [...loadConfig(env).plans].map(([name, limits]) => `${name} (${describePlan(limits)})`);
}

function keysCommand(
  sub: string,
  spec: Omit<Command, 'path' | 'run'>,
  run: (parsed: Parsed, services: Services, io: CliIo, command: Command) => Promise<void>,
): Command {
  const command: Command = {
    path: `keys ${sub}`,
    ...spec,
    run: (parsed, env, io) =>
      withServices(env, io, (services) => run(parsed, services, io, command)),
  };
  return command;
}

function change(
  sub: string,
  summary: string,
  apply: (services: Services, id: string) => Promise<KeyOutcome<unknown>>,
  done: string,
): Command {
  return keysCommand(sub, { summary, args: [ID] }, async ({ positionals }, services, io) => {
    const id = positionals[0] ?? '';
    await unwrap(services, await apply(services, id), id);
    io.out(`Key ${id} ${done}.`);
  });
}

export const keysCommands: readonly Command[] = [
  keysCommand(
    'create',
    {
      summary: 'Create a key and print it once (only its hash is stored).',
      options: {
        name: { type: 'string', value: 'NAME', help: '1-100 printable characters', required: true },
        plan: { type: 'string', value: 'PLAN', help: 'a configured plan', required: true },
        inactive: { type: 'boolean', help: 'create the key with its plan inactive' },
        json: { type: 'boolean', help: 'print {"id","key","name","plan","active"}' },
      },
      choices: (option, env) => (option === 'plan' ? planChoices(env) : undefined),
      details:
        'Example:\n  plauder keys create --name "my tool" --plan standard\n\nPlans come from PLAUDER_PLANS (default standard=1000,plus=5000).',
    },
    async ({ values }, services, io) => {
      const name = String(values.name);
      const plan = String(values.plan);
      const result = await createKey(services, { name, plan, active: values.inactive !== true });
      printIssued(
        io,
        await unwrap(services, result, undefined, plan),
        values.json === true,
        'Created',
      );
    },
  ),
  keysCommand(
    'list',
    {
      summary:
        "List the keys (never their secrets) with this month's usage and, for plans with a per-minute limit, this minute's.",
      options: {
        search: {
          type: 'string',
          value: 'TEXT',
          help: 'only keys whose name, id or key prefix contains TEXT (any case)',
        },
        plan: { type: 'string', value: 'PLAN', help: 'only keys on this plan' },
        limit: {
          type: 'string',
          value: 'N',
          help: `at most N keys, 1-${LIST_LIMIT_MAX} (default: all), oldest first`,
        },
        json: JSON_OPTION,
      },
    },
    listKeys,
  ),
  keysCommand(
    'rotate',
    {
      summary: 'Give a key a new secret and print it once; id, plan, usage and sessions stay.',
      args: [ID],
      options: {
        grace: {
          type: 'string',
          value: 'DURATION',
          help: 'how long the old secret stays valid: 0 (default) to 365d, e.g. 30m, 24h, 7d',
        },
        json: { type: 'boolean', help: 'print {"id","key","name","plan","active"}' },
      },
    },
    async ({ values, positionals }, services, io, command) => {
      const id = positionals[0] ?? '';
      const grace = values.grace === undefined ? '0' : String(values.grace);
      const graceMs = parseGrace(grace);
      if (graceMs === undefined)
        throw usageError(
          command,
          `--grace: expected a duration from 0 to 365d, such as 30m, 24h or 7d, got "${grace}"`,
        );
      const issued = await unwrap(services, await rotateKey(services, id, grace), id);
      printIssued(io, issued, values.json === true, 'Rotated');
      if (values.json) return;
      io.out(
        graceMs > 0
          ? `The old key stays valid for ${grace}, until ${issued.previousKeyExpiresAt}.`
          : 'The old key is no longer valid.',
      );
    },
  ),
  change(
    'revoke',
    'Revoke a key: every secret of it is refused from the next request on.',
    (s, id) => revokeKey(s, id),
    'revoked',
  ),
  keysCommand(
    'set-plan',
    {
      summary: "Move a key to another plan; this month's usage stays.",
      args: [ID, { name: 'PLAN', help: 'a configured plan (PLAUDER_PLANS)' }],
    },
    async ({ positionals }, services, io) => {
      const [id = '', plan = ''] = positionals;
      await unwrap(services, await updateKey(services, id, { plan }), id, plan);
      io.out(`Key ${id} is now on plan ${plan}.`);
    },
  ),
  change(
    'activate',
    "Make a key's plan active: requests get replies again.",
    (s, id) => updateKey(s, id, { active: true }),
    'activated',
  ),
  change(
    'deactivate',
    "Make a key's plan inactive: requests get the soft error plan_inactive.",
    (s, id) => updateKey(s, id, { active: false }),
    'deactivated',
  ),
];

async function listKeys(
  { values }: Parsed,
  services: Services,
  io: CliIo,
  command: Command,
): Promise<void> {
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= LIST_LIMIT_MAX))
    throw usageError(
      command,
      `--limit: expected a whole number from 1 to ${LIST_LIMIT_MAX}, got "${values.limit}"`,
    );
  const query: ListQuery = {
    ...(values.search === undefined ? {} : { q: String(values.search) }),
    ...(values.plan === undefined ? {} : { plan: String(values.plan) }),
  };
  // The same pages as the admin API's; without --limit, all of them in turn.
  const listed =
    limit === undefined
      ? await everyPage(query, (q) => listKeyViews(services, q))
      : await listKeyViews(services, { ...query, limit }).then((outcome) =>
          outcome.ok ? { ok: true as const, value: [outcome.value] } : outcome,
        );
  if (!listed.ok) throw new CliError('The list could not be read.');
  const month = listed.value[0]?.month ?? '';
  const total = listed.value[0]?.page.total ?? 0;
  const keys = listed.value.flatMap((page) => page.keys);
  const rows = keys.map((k) => ({
    id: k.id,
    name: k.name,
    plan: k.plan,
    status: k.status,
    active: k.active,
    revoked: k.status === 'revoked',
    displayPrefix: k.displayPrefix,
    createdAt: k.createdAt,
    month,
    used: k.usage.used,
    limit: k.usage.limit,
    // This clock minute's requests against the plan's per-minute limit (null: none).
    perMinute: k.usage.perMinute,
  }));
  if (values.json) return io.out(JSON.stringify(rows));
  if (rows.length === 0 && (query.q !== undefined || query.plan !== undefined))
    return io.out('No keys match.');
  if (rows.length === 0)
    return io.out(
      `No keys yet in ${databaseName(services.config.database)}. Create one with: plauder keys create --name N --plan standard`,
    );
  io.out(
    formatTable(
      ['ID', 'NAME', 'PLAN', 'STATUS', `USED ${month}`, 'THIS MINUTE', 'KEY', 'CREATED'],
      rows.map((r) => [
        r.id,
        r.name,
        r.plan,
        r.status,
        `${r.used}/${r.limit ?? '?'}`,
        r.perMinute === null ? '-' : `${r.perMinute.used}/${r.perMinute.limit}`,
        `${r.displayPrefix}…`,
        r.createdAt,
      ]),
    ),
  );
  if (rows.length < total) io.out(`${rows.length} of ${total} keys shown.`);
}

function printIssued(io: CliIo, issued: IssuedKey, json: boolean, verb: string): void {
  if (json) {
    const { id, key, name, plan, active } = issued;
    io.out(JSON.stringify({ id, key, name, plan, active }));
    return;
  }
  io.out(
    `${verb} key ${issued.id} (name "${issued.name}", plan ${issued.plan}, ${issued.active ? 'active' : 'inactive'}).`,
  );
  io.out('This is the only time the key is shown. Store it like a password:');
  io.out('');
  io.out(`  ${issued.key}`);
  io.out('');
}

/**
 * The value of a key operation, or the admin API's message for its problem: a plan that
 * is not configured (exit 2, naming the plans), a bad name or grace (2), no such key or a
 * revoked key (1).
 */
async function unwrap<T>(
  services: Services,
  result: KeyOutcome<T>,
  id?: string,
  plan?: string,
): Promise<T> {
  if (result.ok) return result.value;
  switch (result.problem) {
    case 'unknown_plan':
      throw new CliError(
        `Unknown plan "${plan}": ${ERROR_MESSAGES.plan_unknown} Plans: ${[...services.config.plans]
          .map(([name, limits]) => `${name} (${describePlan(limits)})`)
          .join(', ')}.`,
        2,
      );
    case 'invalid_name':
      throw new CliError(ERROR_MESSAGES.name_invalid.replace('The field "name"', 'The name'), 2);
    case 'invalid_grace':
      throw new CliError(ERROR_MESSAGES.grace_invalid.replace('The field "grace"', '--grace'), 2);
    case 'revoked':
      throw new CliError(`Key ${id}: ${ERROR_MESSAGES.key_revoked}`);
    case 'not_found':
      throw new CliError(`Key ${id}: ${ERROR_MESSAGES.key_not_found} See "plauder keys list".`);
  }
}
