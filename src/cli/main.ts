#!/usr/bin/env node
/**
 * @module cli/main
 * The `plauder` executable: runs the command line (cli/plauder.ts) on this process's
 * arguments, environment, stdout and stderr, and exits with its code.
 */
import { plauder } from './plauder.js';

const code = await plauder(process.argv.slice(2), process.env, {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
});
// `serve` returns once the server listens; its shutdown sets the exit code itself.
if (code !== 0) process.exitCode = code;
