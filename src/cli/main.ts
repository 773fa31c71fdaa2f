#!/usr/bin/env -S node --max-semi-space-size=4 --heap-growing-percent=20
/**
 * @module cli/main
 * `plauder serve | keys ... | usage ...`. Reads the same environment as the server and
 * works on the same database, also while a server is running.
 */
import { ConfigError } from '../config/config.js';
import { serve } from '../server.js';
import { CliError, type CliIo } from './cli-context.js';
import { keysCommand } from './keys-command.js';
import { usageCommand } from './usage-command.js';

const HELP = `plauder: a key-protected chat API

Usage:
  plauder serve
  plauder keys create --name N --plan P [--inactive] [--json]
  plauder keys list [--json]
  plauder keys rotate ID [--grace 24h] [--json]
  plauder keys revoke ID
  plauder keys set-plan ID PLAN
  plauder keys activate ID
  plauder keys deactivate ID
  plauder usage [--month YYYY-MM] [--json]

Configuration comes from the environment (PLAUDER_DATABASE_URL, PLAUDER_PLANS, ...); see README.md.`;

const io: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'serve':
      await serve(process.env);
      return 0;
    case 'keys':
      await keysCommand(args, process.env, io);
      return 0;
    case 'usage':
      await usageCommand(args, process.env, io);
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      io.out(HELP);
      return command === undefined ? 2 : 0;
    default:
      io.err(`Unknown command "${command}".\n\n${HELP}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof CliError || error instanceof ConfigError) {
      io.err(error.message);
      process.exitCode = error instanceof CliError ? error.exitCode : 2;
    } else {
      io.err(`plauder: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    }
  },
);
