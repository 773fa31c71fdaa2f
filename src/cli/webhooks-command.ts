/**
 * @module cli/webhooks-command
 * `plauder webhooks secret`: prints a new secret for PLAUDER_WEBHOOK_SECRET.
 * `plauder webhooks enable`: sends to PLAUDER_WEBHOOK_URL again after it answered 410 Gone.
 */
import { newWebhookSecret } from '../events/webhook-signature.js';
import { CliError, withServices } from './cli-context.js';
import type { Command } from './command-line.js';

export const webhooksCommands: readonly Command[] = [
  {
    path: 'webhooks secret',
    summary: 'Print a new secret for PLAUDER_WEBHOOK_SECRET (needs no configuration).',
    async run(_parsed, _env, io) {
      io.out(newWebhookSecret());
    },
  },
  {
    path: 'webhooks enable',
    summary: 'Send to PLAUDER_WEBHOOK_URL again after it answered 410 Gone.',
    async run(_parsed, env, io) {
      await withServices(env, io, async (services) => {
        const url = services.config.webhook?.url;
        if (url === undefined) throw new CliError('PLAUDER_WEBHOOK_URL is not set.', 2);
        const was = await services.events.enableReceiver(url);
        io.out(
          was
            ? 'The receiver is enabled again; pending events are sent from the next poll on.'
            : 'The receiver was not disabled.',
        );
      });
    },
  },
];
