/**
 * @module cli/plauder
 * `plauder serve | keys ... | usage | webhooks ... | kb check | ask`. Reads the same
 * environment as the server and works on the same database, also while a server is running.
 * Every command and group answers `--help` without running anything; `--version` prints
 * the version from package.json.
 */
import { ConfigError, loadConfig } from '../config/config.js';
import { VERSION } from '../version.js';
import { askCommand } from './ask-command.js';
import { CliError, type CliIo, createsDatabase, databaseName } from './cli-context.js';
import { type Command, EXIT_CODES, runCommand, usageLine, wantsHelp } from './command-line.js';
import { kbCommand } from './kb-command.js';
import { keysCommands } from './keys-command.js';
import { usageCommand } from './usage-command.js';
import { webhooksCommands } from './webhooks-command.js';

const serveCommand: Command = {
  path: 'serve',
  summary:
    'Run the service on HOST:PORT (default 127.0.0.1:3000); migrates the database on start. SIGTERM or SIGINT shut it down gracefully, SIGHUP reloads the knowledge base.',
  details:
    'The database is PLAUDER_DATABASE_URL (default sqlite:./data/plauder.db, relative to the current directory).',
  async run(_parsed, env, io) {
    const creates = createsDatabase(loadConfig(env).database);
    // Loaded here, not at the top: the other commands start in half the time without the
    // server's modules (Fastify, the cores, the MCP SDK).
    const { serve } = await import('../server.js');
    await serve(env);
    if (creates) io.err(`created database ${databaseName(loadConfig(env).database)}`);
  },
};

const COMMANDS: readonly Command[] = [
  serveCommand,
  ...keysCommands,
  usageCommand,
  ...webhooksCommands,
  kbCommand,
  askCommand,
];

/** Words that only group subcommands: `plauder keys` alone is not a command. */
const GROUPS: Readonly<Record<string, string>> = {
  keys: 'Manage API keys (only their hashes are stored; a key is shown once).',
  webhooks: 'Webhook receivers and their secret.',
  kb: 'Knowledge bases of the built-in core.',
};

function overview(commands: readonly Command[]): string {
  return commands
    .map((c) => `  ${usageLine(c)}\n      ${c.summary.split(/(?<=\.) /)[0]}`)
    .join('\n');
}

const HELP = `plauder ${VERSION}: a key-protected chat API

Usage:
${overview(COMMANDS)}

  plauder --version          print the version
  plauder COMMAND --help     the options and arguments of a command

Configuration comes from the environment (PLAUDER_DATABASE_URL, PLAUDER_PLANS, ...); see docs/configuration.md.

${EXIT_CODES}`;

function groupHelp(group: string): string {
  const members = COMMANDS.filter((c) => c.path.startsWith(`${group} `));
  return `usage: plauder ${group} <${members.map((c) => c.path.split(' ')[1]).join('|')}> ...\n\n${GROUPS[group]}\n\n${overview(members)}\n\nRun "plauder ${group} COMMAND --help" for a command's options.\n\n${EXIT_CODES}`;
}

/**
 * Runs one command line with the given environment and output, and returns the exit code
 * (documented in EXIT_CODES): the whole CLI but the process around it (cli/main.ts).
 */
export async function plauder(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
): Promise<number> {
  try {
    return await dispatch(argv, env, io);
  } catch (error) {
    if (error instanceof CliError || error instanceof ConfigError) {
      io.err(error.message);
      return error instanceof CliError ? error.exitCode : 2;
    }
    io.err(`plauder: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

async function dispatch(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    io.err(HELP);
    return 2;
  }
  if (first === '--version' || first === '-V' || first === 'version') {
    io.out(`plauder ${VERSION}`);
    return 0;
  }
  if (first === '--help' || first === '-h') {
    io.out(HELP);
    return 0;
  }
  // `plauder help keys rotate` is `plauder keys rotate --help`.
  if (first === 'help')
    return dispatch(rest.length === 0 ? ['--help'] : [...rest, '--help'], env, io);
  const group = GROUPS[first];
  if (group !== undefined) {
    const [sub, ...args] = rest;
    if (sub === undefined || wantsHelp([sub])) {
      if (sub === undefined) {
        io.err(`plauder ${first}: missing command\n\n${groupHelp(first)}`);
        return 2;
      }
      io.out(groupHelp(first));
      return 0;
    }
    const command = COMMANDS.find((c) => c.path === `${first} ${sub}`);
    if (command === undefined) {
      io.err(`plauder ${first}: unknown command "${sub}"\n\n${groupHelp(first)}`);
      return 2;
    }
    await runCommand(command, args, env, io);
    return 0;
  }
  const command = COMMANDS.find((c) => c.path === first);
  if (command === undefined) {
    io.err(`plauder: unknown command "${first}"\n\n${HELP}`);
    return 2;
  }
  await runCommand(command, rest, env, io);
  return 0;
}
