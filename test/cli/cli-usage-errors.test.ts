/**
 * The `plauder` command as a Unix tool: `--help` for every command and group (exit 0, runs
 * nothing, touches no database), `--version` from package.json, argument errors that name
 * the argument and the valid choices (exit 2), the admin API's rules and messages, and the
 * database named when a command creates it or finds no keys in it.
 * The many checks of texts run the CLI in this process (runCliInProcess); the executable
 * itself is run for its exit codes and streams ("the executable") and where the working
 * directory matters.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { CLI, type CliResult, runCli } from '../helpers/processes.js';

const root = path.resolve(path.dirname(CLI), '../..');
const packageVersion = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version;

let dir: string;
let env: Record<string, string>;
const databaseFile = () => path.join(dir, 'db', 'plauder.db');

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plauder-cli-'));
  env = { PLAUDER_DATABASE_URL: `sqlite:${databaseFile()}` };
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]): Promise<CliResult> {
  return runCliInProcess(args, env);
}

const COMMANDS = [
  ['serve'],
  ['keys', 'create'],
  ['keys', 'list'],
  ['keys', 'rotate'],
  ['keys', 'revoke'],
  ['keys', 'set-plan'],
  ['keys', 'activate'],
  ['keys', 'deactivate'],
  ['usage'],
  ['webhooks', 'secret'],
  ['webhooks', 'enable'],
  ['kb', 'check'],
  ['ask'],
];

describe('--help and --version', () => {
  it.each(
    COMMANDS.flatMap((command) => [
      [...command, '--help'],
      [...command, '-h'],
    ]),
  )('%s %s %s prints the usage and runs nothing', async (...args: string[]) => {
    const res = await cli(...args);
    expect(res.code, res.stderr).toBe(0);
    const words = args.filter((a) => !a.startsWith('-'));
    expect(res.stdout).toMatch(new RegExp(`^usage: plauder ${words.join(' ')}`));
    expect(res.stdout).toMatch(/Exit codes:/);
    expect(res.stderr).toBe('');
    // Nothing ran: no database was created, no server listened, no secret was printed.
    expect(fs.existsSync(databaseFile())).toBe(false);
    expect(res.stdout).not.toMatch(/listening|whsec_/);
  });

  it.each([['keys'], ['webhooks'], ['kb']])('%s --help lists its commands', async (group) => {
    const res = await cli(group, '--help');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`^usage: plauder ${group} <`));
    expect(res.stderr).toBe('');
  });

  it('--help, -h and help list every command with the exit codes; no command is a usage error', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const res = await cli(...args);
      expect(res.code).toBe(0);
      for (const command of COMMANDS) expect(res.stdout).toContain(`plauder ${command.join(' ')}`);
      expect(res.stdout).toMatch(/Exit codes:\n {2}0 .*\n {2}1 .*\n[\s\S]* {2}2 /);
    }
    const bare = await cli();
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/plauder keys create/);
    expect((await cli('help', 'keys', 'rotate')).stdout).toMatch(/^usage: plauder keys rotate ID/);
  });

  it('--version prints the version of package.json', async () => {
    for (const flag of ['--version', '-V']) {
      const res = await cli(flag);
      expect(res.code).toBe(0);
      expect(res.stdout).toBe(`plauder ${packageVersion}\n`);
    }
  });
});

describe('the executable', () => {
  it('exits 0 after --help and --version, 2 after a usage error, with the texts on stdout and stderr', async () => {
    const help = await runCli(['keys', 'create', '--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: plauder keys create/);
    expect(help.stderr).toBe('');
    const version = await runCli(['--version'], env);
    expect(version.code).toBe(0);
    expect(version.stdout).toBe(`plauder ${packageVersion}\n`);
    const missing = await runCli(['keys', 'rotate'], env);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/^plauder keys rotate: missing argument ID/);
    const bare = await runCli([], env);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/plauder keys create/);
    expect(fs.existsSync(databaseFile())).toBe(false);
  });

  it('exits 1 when a change is refused, with the message on stderr', async () => {
    // The refusal is the executable's; the key it refuses is made in this process.
    const created = await cli('keys', 'create', '--name', 'Exe', '--plan', 'standard', '--json');
    expect(created.code, created.stderr).toBe(0);
    const { id } = JSON.parse(created.stdout);
    expect((await cli('keys', 'revoke', id)).code).toBe(0);
    const again = await runCli(['keys', 'revoke', id], env);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toBe(`Key ${id}: The key is revoked and can no longer be changed.\n`);
  });
});

describe('argument errors name the argument and the choices, exit 2', () => {
  it('keys rotate without an id names ID', async () => {
    const res = await cli('keys', 'rotate');
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^plauder keys rotate: missing argument ID/);
    expect(res.stderr).toMatch(/usage: plauder keys rotate ID \[--grace DURATION\] \[--json\]/);
  });

  it('keys create --name x without --plan names --plan and the configured plans', async () => {
    const res = await runCliInProcess(['keys', 'create', '--name', 'x'], {
      ...env,
      PLAUDER_PLANS: 'standard=1000,plus=5000,gold=9000',
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/missing --plan PLAN \(one of: standard .*, plus .*, gold .*\)/);
    expect(res.stdout).toBe('');
  });

  it('an unknown option is named, with the options the command knows', async () => {
    const res = await cli('keys', 'create', '--nmae', 'x', '--plan', 'standard');
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(
      /unknown option --nmae \(options: --name, --plan, --inactive, --json, --help\)/,
    );
  });

  it.each([
    [['keys', 'list', 'extra'], /unexpected argument extra/],
    [['keys', 'create', '--name'], /option --name needs a value/],
    [['keys', 'list', '--json=yes'], /option --json takes no value/],
    [['keys', 'frobnicate'], /unknown command "frobnicate"/],
    [['keys'], /missing command/],
    [['ask', '--lang', 'fr', 'Hallo'], /--lang: expected de or en, got "fr"/],
    [['ask'], /missing argument MESSAGE/],
    [['kb', 'check', 'a', 'b'], /unexpected argument b/],
    [['usage', '--month', '2025-1'], /--month: expected YYYY-MM, e\.g\. 2026-11, got "2025-1"/],
  ])('%j', async (args, message) => {
    const res = await cli(...args);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('the admin API rules and the database', () => {
  it('says which database it created, once, and names it when there are no keys', async () => {
    const cwd = fs.mkdtempSync(path.join(dir, 'cwd-'));
    const first = await runCli(['keys', 'list'], {}, cwd);
    expect(first.code, first.stderr).toBe(0);
    const file = path.join(fs.realpathSync(cwd), 'data', 'plauder.db');
    expect(first.stderr).toBe(`created database ${file}\n`);
    expect(first.stdout).toContain(`No keys yet in ${file}.`);
    expect(fs.existsSync(file)).toBe(true);
    const second = await runCli(['keys', 'list'], {}, cwd);
    expect(second.stderr).toBe('');
  });

  it('refuses a grace over 365d as the admin API does, and accepts 365d', async () => {
    const created = await cli('keys', 'create', '--name', 'Grace', '--plan', 'standard', '--json');
    const { id } = JSON.parse(created.stdout);
    const tooLong = await cli('keys', 'rotate', id, '--grace', '400d');
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toMatch(/--grace: expected a duration from 0 to 365d.*got "400d"/);
    expect(tooLong.stdout).toBe('');
    const year = await cli('keys', 'rotate', id, '--grace', '365d');
    expect(year.code, year.stderr).toBe(0);
    expect(year.stdout).toMatch(/The old key stays valid for 365d/);
  });

  it('refuses every change of a revoked key with the admin API message, exit 1', async () => {
    const created = await cli('keys', 'create', '--name', 'Gone', '--plan', 'standard', '--json');
    const { id } = JSON.parse(created.stdout);
    expect((await cli('keys', 'revoke', id)).code).toBe(0);
    for (const args of [['revoke'], ['rotate'], ['activate'], ['set-plan', 'plus']]) {
      const res = await cli('keys', args[0] ?? '', id, ...args.slice(1));
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(`Key ${id}: The key is revoked and can no longer be changed.\n`);
    }
  });

  it('refuses an unknown plan naming the plans, and a bad name, with exit 2', async () => {
    const plan = await cli('keys', 'create', '--name', 'x', '--plan', 'gold');
    expect(plan.code).toBe(2);
    expect(plan.stderr).toMatch(
      /Unknown plan "gold": No plan with this name is configured\. Plans: standard .*plus/,
    );
    const name = await cli('keys', 'create', '--name', ' ', '--plan', 'standard');
    expect(name.code).toBe(2);
    expect(name.stderr).toMatch(/The name must be 1-100 printable characters/);
  });
});
