/**
 * @module cli/keys-command
 * `plauder keys create | list | rotate | revoke | set-plan | activate | deactivate`.
 */
import { parseArgs } from 'node:util';
import { type IssuedKey, type KeyResult, keyStatus, keysWithUsage } from '../keys/key-service.js';
import type { Services } from '../services.js';
import type { KeyRecord } from '../storage/repositories/keys-repository.js';
import { parseDuration } from '../util/duration.js';
import { CliError, type CliIo, withServices } from './cli-context.js';
import { formatTable } from './format-table.js';

type Handler = (args: string[], services: Services, io: CliIo) => Promise<void>;

const SUBCOMMANDS: Record<string, Handler> = {
  create: createKey,
  list: listKeys,
  rotate: rotateKey,
  revoke: (args, s, io) => changeKey(args, io, 'revoke', (id) => s.keys.revoke(id), 'revoked'),
  activate: (args, s, io) =>
    changeKey(args, io, 'activate', (id) => s.keys.update(id, { active: true }), 'activated'),
  deactivate: (args, s, io) =>
    changeKey(args, io, 'deactivate', (id) => s.keys.update(id, { active: false }), 'deactivated'),
  'set-plan': setPlan,
};

export async function keysCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
): Promise<void> {
  const [sub, ...rest] = args;
  const handler = sub === undefined ? undefined : SUBCOMMANDS[sub];
  if (!handler)
    throw new CliError(`usage: plauder keys <${Object.keys(SUBCOMMANDS).join('|')}> ...`, 2);
  await withServices(env, (services) => handler(rest, services, io));
}

async function createKey(args: string[], services: Services, io: CliIo): Promise<void> {
  const { values } = parse(args, {
    name: { type: 'string' },
    plan: { type: 'string' },
    inactive: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (!values.name || !values.plan)
    throw new CliError('usage: plauder keys create --name N --plan P [--inactive] [--json]', 2);
  const result = await services.keys.create({
    name: values.name,
    plan: values.plan,
    active: !values.inactive,
  });
  printIssued(io, unwrap(result, services, values.plan), values.json === true, 'Created');
}

async function listKeys(args: string[], services: Services, io: CliIo): Promise<void> {
  const { values } = parse(args, { json: { type: 'boolean' } });
  const now = services.clock();
  const month = services.quota.monthOf(now).month;
  const keys = await keysWithUsage(services.keys, services.usage, month);
  const rows = keys.map(({ key: k, used }) => ({
    id: k.id,
    name: k.name,
    plan: k.plan,
    status: keyStatus(k),
    active: k.active,
    revoked: k.revokedAt !== null,
    displayPrefix: k.displayPrefix,
    createdAt: new Date(k.createdAt).toISOString(),
    month,
    used,
    limit: services.config.plans.get(k.plan) ?? null,
  }));
  if (values.json) return io.out(JSON.stringify(rows));
  if (rows.length === 0)
    return io.out('No keys yet. Create one with: plauder keys create --name N --plan standard');
  io.out(
    formatTable(
      ['ID', 'NAME', 'PLAN', 'STATUS', `USED ${month}`, 'KEY', 'CREATED'],
      rows.map((r) => [
        r.id,
        r.name,
        r.plan,
        r.status,
        `${r.used}/${r.limit ?? '?'}`,
        `${r.displayPrefix}…`,
        r.createdAt,
      ]),
    ),
  );
}

async function rotateKey(args: string[], services: Services, io: CliIo): Promise<void> {
  const { values, positionals } = parse(
    args,
    { grace: { type: 'string' }, json: { type: 'boolean' } },
    1,
  );
  const id = positionals[0] as string;
  const graceMs = values.grace === undefined ? 0 : parseDuration(values.grace);
  if (graceMs === undefined)
    throw new CliError(
      `--grace: expected a duration such as 30m, 24h or 7d, got "${values.grace}"`,
      2,
    );
  printIssued(
    io,
    unwrap(await services.keys.rotate(id, graceMs), services, undefined, id),
    values.json === true,
    'Rotated',
  );
  if (!values.json) {
    io.out(
      graceMs > 0
        ? `The old key stays valid for ${values.grace}.`
        : 'The old key is no longer valid.',
    );
  }
}

async function setPlan(args: string[], services: Services, io: CliIo): Promise<void> {
  const { positionals } = parse(args, {}, 2);
  const [id = '', plan = ''] = positionals;
  const record = unwrap(await services.keys.update(id, { plan }), services, plan, id);
  io.out(`Key ${record.id} is now on plan ${record.plan}.`);
}

async function changeKey(
  args: string[],
  io: CliIo,
  verb: string,
  change: (id: string) => Promise<KeyResult<KeyRecord>>,
  done: string,
): Promise<void> {
  const { positionals } = parse(args, {}, 1, `usage: plauder keys ${verb} ID`);
  const id = positionals[0] as string;
  unwrap(await change(id), undefined, undefined, id);
  io.out(`Key ${id} ${done}.`);
}

function printIssued(io: CliIo, issued: IssuedKey, json: boolean, verb: string): void {
  if (json) {
    io.out(JSON.stringify(issued));
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

function unwrap<T>(result: KeyResult<T>, services?: Services, plan?: string, id?: string): T {
  if (result.ok) return result.value;
  switch (result.problem) {
    case 'not_found':
      throw new CliError(`No active key with id "${id}".`);
    case 'unknown_plan':
      throw new CliError(
        `Unknown plan "${plan}". Plans: ${[...(services?.config.plans.keys() ?? [])].join(', ')}.`,
        2,
      );
    case 'invalid_name':
      throw new CliError('The name must be 1-100 printable characters.', 2);
  }
}

type Options = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

function parse<O extends Options>(args: string[], options: O, positionalCount = 0, usage?: string) {
  try {
    const parsed = parseArgs({
      args,
      options: options ?? {},
      allowPositionals: positionalCount > 0,
      strict: true,
    });
    if (parsed.positionals.length !== positionalCount)
      throw new Error(`expected ${positionalCount} argument(s)`);
    return parsed as ReturnType<
      typeof parseArgs<{ args: string[]; options: O; allowPositionals: true }>
    >;
  } catch (error) {
    throw new CliError(usage ?? (error as Error).message, 2);
  }
}
