/**
 * Server processes for the bench: free loopback ports, start and wait until a server
 * answers HTTP, stop it, and kill every child that is still running when the bench ends
 * for any reason (normal end, failing scenario, exception, Ctrl-C / SIGTERM). Also the
 * /proc readings of a child: resident memory and CPU time.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const children = new Set();
const tempDirs = new Set();

/** Kills what is left and removes temp dirs on every way out of the bench process. */
export function installCleanup() {
  process.on('exit', cleanupNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping servers\n`);
      cleanupNow();
      process.exit(130);
    });
  }
}

function cleanupNow() {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  children.clear();
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

export function makeTempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** A port that was free on 127.0.0.1 a moment ago (the OS picks it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `node [nodeArgs] script [args]` and resolves once `GET readyPath` answers with
 * any status. stdout is discarded (servers may log every request) unless `stdoutFile` names a
 * file for it (e.g. a `--trace-gc` log); the tail of stderr is kept for error messages. `own(server)` is called at once, before the server is ready,
 * so whoever runs the scenario can always stop it.
 */
export async function startServer({
  name,
  script,
  args = [],
  nodeArgs = [],
  env,
  port,
  readyPath = '/',
  cwd,
  timeoutMs = 30_000,
  own = () => {},
  stdoutFile,
}) {
  const stdout = stdoutFile === undefined ? 'ignore' : fs.openSync(stdoutFile, 'w');
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env,
    cwd,
    stdio: ['ignore', stdout, 'pipe'],
  });
  if (typeof stdout === 'number') fs.closeSync(stdout);
  children.add(child);
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  exited.then(() => children.delete(child));
  const server = {
    name,
    pid: child.pid,
    port,
    url: `http://127.0.0.1:${port}`,
    stderrTail: () => stderr.trim(),
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
    /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
    async stop(graceMs = 10_000) {
      if (!server.running()) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
  own(server);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!server.running()) {
      const { code, signal } = await exited;
      throw new Error(
        `${name} exited (${signal ?? code}) before it was ready:\n${server.stderrTail()}`,
      );
    }
    if (await answers(`${server.url}${readyPath}`)) return server;
    if (Date.now() > deadline) {
      await server.stop(1000);
      throw new Error(`${name} did not answer on ${server.url} within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function answers(url) {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: 1000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(true));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/** Runs a Node script to completion and returns its stdout; throws with stderr on failure. */
export function runNode(script, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    child.on('exit', (code, signal) => {
      children.delete(child);
      if (code === 0) resolve(stdout);
      else
        reject(new Error(`${path.basename(script)} failed (${signal ?? code}):\n${stderr.trim()}`));
    });
  });
}

/** VmRSS and VmHWM (peak RSS) of a process, in kB; undefined once it is gone. */
export function memoryOf(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
    return { rssKb: kb('VmRSS'), hwmKb: kb('VmHWM') };
  } catch {
    return undefined;
  }
}

let clockTicks;
/** User and system CPU seconds of a process, all threads (NaN each once it is gone). */
function cpuTimesOf(pid) {
  clockTicks ??= readClockTicks();
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / clockTicks, system: Number(fields[12]) / clockTicks };
  } catch {
    return { user: Number.NaN, system: Number.NaN };
  }
}

/** User + system CPU seconds of a process, all threads. */
export function cpuSecondsOf(pid) {
  const { user, system } = cpuTimesOf(pid);
  return user + system;
}

function readClockTicks() {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/**
 * Samples VmRSS every `intervalMs` while a measurement runs and CPU time at both ends.
 * `stop()` returns the peak RSS seen (MB) and the server's CPU use (1 = one full core).
 */
export function watchProcess(pid, intervalMs = 100) {
  let peakKb = memoryOf(pid)?.rssKb ?? 0;
  const cpu0 = cpuSecondsOf(pid);
  const t0 = performance.now();
  const timer = setInterval(() => {
    const rss = memoryOf(pid)?.rssKb;
    if (rss !== undefined && rss > peakKb) peakKb = rss;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      const rss = memoryOf(pid)?.rssKb;
      if (rss !== undefined && rss > peakKb) peakKb = rss;
      const seconds = (performance.now() - t0) / 1000;
      return { peakRssMb: peakKb / 1024, cpuCores: (cpuSecondsOf(pid) - cpu0) / seconds };
    },
  };
}
