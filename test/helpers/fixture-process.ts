/**
 * Runs a fixture server of test/fixtures/ (an upstream the cores talk to) as a real child
 * process on loopback: it prints its port on its first stdout line and stops on SIGTERM or
 * when the test runner's end of its stdin closes.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';

export interface FixtureProcess {
  readonly port: number;
  readonly origin: string;
  /** Calls a control route of the fixture (`/__control`, ...) and returns its JSON answer. */
  control(method: string, path: string, body?: unknown): Promise<unknown>;
  /** SIGTERM (an orderly stop) or SIGKILL (connections die unclosed); resolves on exit. */
  end(signal: NodeJS.Signals): Promise<void>;
}

export async function startFixtureProcess(file: string, args: string[]): Promise<FixtureProcess> {
  const child = spawn(process.execPath, [file, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await readPort(child);
  const origin = `http://127.0.0.1:${port}`;
  return {
    port,
    origin,
    async control(method, path, body) {
      const response = await fetch(`${origin}${path}`, {
        method,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!response.ok) throw new Error(`fixture control ${path} answered ${response.status}`);
      return response.json();
    },
    end(signal) {
      return new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      });
    },
  };
}

function readPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const line = text.split('\n')[0];
      if (text.includes('\n') && line !== undefined) resolve(Number(line));
    });
    child.once('exit', (code) => reject(new Error(`fixture exited early with ${code}`)));
  });
}

/** A loopback port with nothing listening: bind to port 0, note it, close. */
export function deadPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
