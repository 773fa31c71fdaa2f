/**
 * The command line run inside the test process (src/cli/plauder.ts, the whole CLI but the
 * process around it): for the many checks of arguments, help texts and messages, which
 * would otherwise start a Node process each. What only the executable can show (exit codes
 * of the process, the output streams, the working directory) is tested with `runCli`.
 */
import { plauder } from '../../src/cli/plauder.js';
import type { CliResult } from './processes.js';

export async function runCliInProcess(
  args: readonly string[],
  env: Record<string, string>,
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await plauder(args, env, {
    out: (line) => {
      stdout += `${line}\n`;
    },
    err: (line) => {
      stderr += `${line}\n`;
    },
  });
  return { code, stdout, stderr };
}
