/**
 * @module cli/usage-command
 * `plauder usage [--month YYYY-MM] [--json]`: requests per key in a month, listing the
 * keys that existed in that month (as the admin API's usage report does).
 */
import { everyPage } from '../operations/list-query.js';
import { monthUsageReport } from '../operations/usage-operations.js';
import { withServices } from './cli-context.js';
import { type Command, usageError } from './command-line.js';
import { formatTable } from './format-table.js';

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

export const usageCommand: Command = {
  path: 'usage',
  summary:
    'Requests per key in a month (default: this month, in PLAUDER_QUOTA_TIMEZONE), for the keys that existed in that month, and their total.',
  options: {
    month: { type: 'string', value: 'YYYY-MM', help: 'the month, e.g. 2026-11' },
    json: {
      type: 'boolean',
      help: 'print {"month","total","keys":[{"id","name","plan","used","limit"}]}',
    },
  },
  async run({ values }, env, io) {
    const requested = values.month === undefined ? undefined : String(values.month);
    if (requested !== undefined && !MONTH.test(requested))
      throw usageError(usageCommand, `--month: expected YYYY-MM, e.g. 2026-11, got "${requested}"`);
    await withServices(env, io, async (services) => {
      const pages = await everyPage({}, (query) => monthUsageReport(services, requested, query));
      // Without a cursor there is no invalid one.
      if (!pages.ok) throw new Error('unreachable: no cursor was given');
      const [first] = pages.value;
      if (first === undefined) throw new Error('unreachable: every list has a first page');
      const { month, total, timeZone } = first;
      const keys = pages.value
        .flatMap((page) => page.keys)
        .map(({ id, name, plan, used, limit }) => ({
          id,
          name,
          plan,
          used,
          limit,
        }));
      if (values.json) return io.out(JSON.stringify({ month, total, keys }));
      io.out(`Usage in ${month} (${timeZone}):`);
      if (keys.length === 0) io.out(`No keys existed in ${month}.`);
      else
        io.out(
          formatTable(
            ['ID', 'NAME', 'PLAN', 'USED', 'LIMIT'],
            keys.map((k) => [k.id, k.name, k.plan, String(k.used), String(k.limit ?? '?')]),
          ),
        );
      io.out(`Total: ${total}`);
    });
  },
};
