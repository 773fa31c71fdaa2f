/**
 * Runs the built service (`dist/`) as real processes: `plauder serve` and CLI commands.
 * `npm test` builds first, so these always test the current code.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../dist/cli/main.js',
);

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCli(
  args: string[],
  env: Record<string, string>,
  cwd?: string,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...baseEnv(), ...env },
      stdio: 'pipe',
      cwd,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface ServerProcess {
  readonly url: string;
  readonly child: ChildProcess;
  readonly output: () => string;
  /** SIGTERM and wait for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function startServerProcess(
  env: Record<string, string>,
  command: string[] = [],
): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0] ?? process.execPath, [...command.slice(1), CLI, 'serve'], {
      env: { ...baseEnv(), PORT: '0', HOST: '127.0.0.1', ...env },
      stdio: 'pipe',
    });
    let output = '';
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    // A server that did not start in time is killed: left running, it would load the
    // machine for the rest of the suite.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start:\n${output}`));
    }, 20_000);
    const onData = (data: Buffer) => {
      output += data;
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        const url = match[1];
        resolve({
          url,
          child,
          output: () => output,
          stop: async (signal = 'SIGTERM') => {
            if (child.exitCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d) => {
      output += d;
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
}

/**
 * The environment of a spawned server or CLI: the test process's own, without its PLAUDER_
 * settings, so the service runs on its shipped defaults; a test that needs another setting
 * passes it itself.
 */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('PLAUDER_') && name !== 'PORT' && name !== 'HOST')
      env[name] = value;
  }
  return env;
}
