/**
 * A PostgreSQL server of the test's own (initdb into a temporary directory, a free
 * loopback port), so a test can stop and start "the database" without touching the
 * shared server other tests are using. Uses the machine's PostgreSQL binaries; as root
 * it runs them as the `postgres` user, since PostgreSQL refuses to run as root.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from './test-database.js';

const run = promisify(execFile);

export interface PrivatePostgres {
  /** Connection URL of the `postgres` database on this server. */
  readonly url: string;
  /** Stops the server: `fast` as an operator would, `immediate` as a crash would. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  const dir = tempDir('plauder-pg-');
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) fs.chownSync(dir, ...postgresIds());
  const pgRun = (tool: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args])
      : run(path.join(bin, tool), args);

  await pgRun('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`;
  const start = () =>
    pgRun('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', 'start']);
  await start();

  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop(mode = 'fast') {
      await pgRun('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
    },
    async start() {
      await start();
    },
    async destroy() {
      await pgRun('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The newest installed major version, e.g. /usr/lib/postgresql/15/bin. */
function postgresBinDir(): string {
  if (process.env.PLAUDER_TEST_PG_BINDIR) return process.env.PLAUDER_TEST_PG_BINDIR;
  const root = '/usr/lib/postgresql';
  const versions = fs
    .readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  if (!versions[0]) throw new Error(`no PostgreSQL binaries under ${root}`);
  return path.join(root, versions[0], 'bin');
}

function postgresIds(): [number, number] {
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) throw new Error('no postgres user on this machine');
  return [Number(uid), Number(gid)];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
