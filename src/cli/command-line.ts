/**
 * @module cli/command-line
 * What every `plauder` command declares about itself (options, arguments, a summary), and
 * the one parser that turns that declaration into help texts and argument errors: `--help`
 * never runs anything, and an error names the missing or wrong argument, the valid choices
 * and the command's usage line.
 */
import { parseArgs } from 'node:util';
import { CliError, type CliIo } from './cli-context.js';

interface OptionSpec {
  readonly type: 'string' | 'boolean';
  /** The placeholder of a string option's value in help texts, e.g. `NAME`. */
  readonly value?: string;
  readonly help: string;
  readonly required?: boolean;
}

interface ArgumentSpec {
  readonly name: string;
  readonly help: string;
  readonly optional?: boolean;
  /** Takes every remaining argument (at least one unless optional). */
  readonly variadic?: boolean;
}

export interface Parsed {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

export interface Command {
  /** The words after `plauder`, e.g. `keys create`. */
  readonly path: string;
  readonly summary: string;
  readonly options?: Readonly<Record<string, OptionSpec>>;
  readonly args?: readonly ArgumentSpec[];
  /** More lines for `--help`: what happens, examples. */
  readonly details?: string;
  /**
   * The valid values of an option, for error messages (`--plan` names the configured
   * plans). May throw the configuration's own error.
   */
  readonly choices?: (option: string, env: NodeJS.ProcessEnv) => readonly string[] | undefined;
  run(parsed: Parsed, env: NodeJS.ProcessEnv, io: CliIo): Promise<void>;
}

export const EXIT_CODES = `Exit codes:
  0  done (also --help and --version)
  1  the operation failed (no such key, a revoked key, a knowledge base with problems,
     a database that cannot be opened)
  2  usage or configuration error (a missing or wrong argument, an unknown option or
     plan, an invalid environment variable)`;

export function usageLine(command: Command): string {
  const parts = [`plauder ${command.path}`];
  for (const arg of command.args ?? []) {
    const name = arg.variadic ? `${arg.name}...` : arg.name;
    parts.push(arg.optional ? `[${name}]` : name);
  }
  for (const [name, option] of Object.entries(command.options ?? {})) {
    const text = option.type === 'string' ? `--${name} ${option.value ?? 'VALUE'}` : `--${name}`;
    parts.push(option.required ? text : `[${text}]`);
  }
  return parts.join(' ');
}

function helpText(command: Command): string {
  const lines = [`usage: ${usageLine(command)}`, '', command.summary];
  const args = command.args ?? [];
  if (args.length > 0) {
    lines.push('', 'Arguments:');
    for (const arg of args) lines.push(row(arg.name, arg.help));
  }
  lines.push('', 'Options:');
  for (const [name, option] of Object.entries(command.options ?? {})) {
    const flag = option.type === 'string' ? `--${name} ${option.value ?? 'VALUE'}` : `--${name}`;
    lines.push(row(flag, option.help));
  }
  lines.push(row('-h, --help', 'show this help and exit'));
  if (command.details) lines.push('', command.details);
  lines.push('', EXIT_CODES);
  return lines.join('\n');
}

function row(left: string, right: string): string {
  return `  ${left.padEnd(20)}  ${right}`;
}

/** True when the arguments ask for help (before a `--` that ends the options). */
export function wantsHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}

/** A usage error: exit code 2, the problem, the usage line and where to read more. */
export function usageError(command: Command, problem: string): CliError {
  return new CliError(
    `plauder ${command.path}: ${problem}\nusage: ${usageLine(command)}\nRun "plauder ${command.path} --help" for more.`,
    2,
  );
}

/** Prints the help on `--help`, else parses the arguments or throws a usage error. */
export async function runCommand(
  command: Command,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
): Promise<void> {
  if (wantsHelp(args)) return io.out(helpText(command));
  await command.run(parseCommand(command, args, env), env, io);
}

function parseCommand(command: Command, args: readonly string[], env: NodeJS.ProcessEnv): Parsed {
  const options = command.options ?? {};
  const specs = command.args ?? [];
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: [...args],
      options: Object.fromEntries(
        Object.entries(options).map(([name, option]) => [name, { type: option.type }]),
      ),
      allowPositionals: true,
      strict: true,
    }) as typeof parsed;
  } catch (error) {
    throw usageError(command, describeParseError(error as Error & { code?: string }, options));
  }
  for (const [name, option] of Object.entries(options)) {
    const value = parsed.values[name];
    if (option.required && (value === undefined || value === '')) {
      const choices = command.choices?.(name, env);
      const oneOf = choices ? ` (one of: ${choices.join(', ')})` : '';
      throw usageError(command, `missing --${name} ${option.value ?? 'VALUE'}${oneOf}`);
    }
  }
  const required = specs.filter((arg) => !arg.optional);
  const variadic = specs.some((arg) => arg.variadic);
  const missing = required[parsed.positionals.length];
  if (missing) throw usageError(command, `missing argument ${missing.name} (${missing.help})`);
  if (!variadic && parsed.positionals.length > specs.length) {
    const extra = parsed.positionals.slice(specs.length);
    throw usageError(
      command,
      `unexpected argument${extra.length > 1 ? 's' : ''} ${extra.join(' ')}`,
    );
  }
  return parsed;
}

function describeParseError(
  error: Error & { code?: string },
  options: Readonly<Record<string, OptionSpec>>,
): string {
  const known = Object.keys(options)
    .map((name) => `--${name}`)
    .concat('--help');
  const option = /'([^']+)'/.exec(error.message)?.[1] ?? '';
  switch (error.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${option.split(' ')[0]} (options: ${known.join(', ')})`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /argument missing/.test(error.message)
        ? `option ${option.split(' ')[0]} needs a value`
        : `option ${option.split(' ')[0]} takes no value`;
    default:
      return error.message;
  }
}
