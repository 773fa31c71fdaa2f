/**
 * @module cli/usage-command
 * `plauder usage [--month YYYY-MM] [--json]`: requests per key in a month.
 */
import { parseArgs } from 'node:util';
import { keysWithUsage } from '../keys/key-service.js';
import { CliError, type CliIo, withServices } from './cli-context.js';
import { formatTable } from './format-table.js';

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

export async function usageCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
): Promise<void> {
  let values: { month?: string; json?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: { month: { type: 'string' }, json: { type: 'boolean' } },
      strict: true,
    }));
  } catch (error) {
    throw new CliError(
      `${(error as Error).message}\nusage: plauder usage [--month YYYY-MM] [--json]`,
      2,
    );
  }
  if (values.month !== undefined && !MONTH.test(values.month)) {
    throw new CliError(`--month: expected YYYY-MM, got "${values.month}"`, 2);
  }
  await withServices(env, async (services) => {
    const month = values.month ?? services.quota.monthOf(services.clock()).month;
    const keys = (await keysWithUsage(services.keys, services.usage, month)).map(
      ({ key: k, used }) => ({
        id: k.id,
        name: k.name,
        plan: k.plan,
        used,
        limit: services.config.plans.get(k.plan) ?? null,
      }),
    );
    const total = keys.reduce((sum, k) => sum + k.used, 0);
    if (values.json) return io.out(JSON.stringify({ month, total, keys }));
    io.out(`Usage in ${month} (${services.config.quotaTimeZone}):`);
    io.out(
      formatTable(
        ['ID', 'NAME', 'PLAN', 'USED', 'LIMIT'],
        keys.map((k) => [k.id, k.name, k.plan, String(k.used), String(k.limit ?? '?')]),
      ),
    );
    io.out(`Total: ${total}`);
  });
}
