#!/usr/bin/env node
/**
 * A bounded loopback attack on the built server (dist/): ATTACKERS keyless connections
 * (default 20 000), half idle, half trickling a header line every second, each reopened
 * as soon as the server closes it, for SECONDS; meanwhile one keyed client chats and
 * probes /healthz one request after the other. Prints the figures.
 *
 *   npm run build && node bench/tools/slow-flood.mjs [--attackers 20000] [--seconds 20]
 *
 * The attackers are split over several processes (a process may hold at most `ulimit -n`
 * descriptors) and over source addresses 127.0.0.2-9 (ephemeral ports per address).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    attackers: { type: 'string', default: '20000' },
    seconds: { type: 'string', default: '20' },
    role: { type: 'string' },
    port: { type: 'string' },
    share: { type: 'string' },
  },
});

if (values.role === 'attacker') await attack(Number(values.port), Number(values.share));
else await main();

async function attack(port, count) {
  let open = 0;
  let opened = 0;
  const connect = (i) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: `127.0.0.${2 + (i % 8)}` });
    let timer;
    let connected = false;
    socket.on('error', () => {});
    socket.once('connect', () => {
      connected = true;
      open++;
      opened++;
      if (i % 2 === 1) {
        socket.write('POST /api/chat HTTP/1.1\r\nHost: x\r\n');
        timer = setInterval(() => socket.writable && socket.write('X-a: b\r\n'), 1000);
      }
    });
    socket.once('close', () => {
      clearInterval(timer);
      if (connected) open--;
      if (!stopping) setTimeout(() => connect(i), 10);
    });
  };
  let stopping = false;
  for (let i = 0; i < count; i++) {
    connect(i);
    if (i % 500 === 499) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const report = setInterval(() => process.send?.({ open, opened }), 1000);
  process.on('message', (message) => {
    if (message === 'stop') {
      stopping = true;
      clearInterval(report);
      process.exit(0);
    }
  });
}

async function main() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const cli = path.join(root, 'dist/cli/main.js');
  const dir = mkdtempSync(path.join(tmpdir(), 'plauder-flood-'));
  const port = 3900 + Math.floor(Math.random() * 90);
  const env = {
    ...process.env,
    PORT: String(port),
    PLAUDER_DATABASE_URL: `sqlite:${path.join(dir, 'flood.db')}`,
    PLAUDER_CORE: 'placeholder',
    PLAUDER_LOG_LEVEL: 'warn',
  };
  const created = spawnSync(
    process.execPath,
    [cli, 'keys', 'create', '--name', 'flood', '--plan', 'plus', '--json'],
    {
      env,
      encoding: 'utf8',
    },
  );
  const { key } = JSON.parse(created.stdout);
  const server = spawn(process.execPath, [cli, 'serve'], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  const total = Number(values.attackers);
  const processes = Math.ceil(total / 8000);
  const states = [];
  const children = Array.from({ length: processes }, (_, i) => {
    const share = Math.min(8000, total - i * 8000);
    const child = spawn(
      process.execPath,
      [
        fileURLToPath(import.meta.url),
        '--role',
        'attacker',
        '--port',
        String(port),
        '--share',
        String(share),
      ],
      { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    );
    child.on('message', (state) => {
      states[i] = state;
    });
    return child;
  });

  const chats = [];
  const probes = [];
  let failures = 0;
  const serverConnections = [];
  const until = Date.now() + Number(values.seconds) * 1000;
  const timed = async (list, run) => {
    const started = performance.now();
    try {
      const response = await run();
      await response.text();
      if (!response.ok) failures++;
      list.push(performance.now() - started);
    } catch {
      failures++;
    }
  };
  const warmUntil = Date.now() + 3000;
  while (Date.now() < until) {
    const measuring = Date.now() > warmUntil;
    const chatList = measuring ? chats : [];
    const probeList = measuring ? probes : [];
    await timed(chatList, () =>
      fetch(`${base}/api/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'hallo' }),
      }),
    );
    await timed(probeList, () => fetch(`${base}/healthz`));
    if (measuring) serverConnections.push(states.reduce((sum, s) => sum + (s?.open ?? 0), 0));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const opened = states.reduce((sum, s) => sum + (s?.opened ?? 0), 0);
  for (const child of children) child.send('stop');
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });

  const q = (list, p) =>
    [...list].sort((a, b) => a - b)[Math.floor((list.length - 1) * p)] ?? Number.NaN;
  const ms = (value) => `${value.toFixed(1)} ms`;
  console.log(
    `attackers: ${total} keyless connections in ${processes} processes, kept reopened for ${values.seconds} s`,
  );
  console.log(
    `attacker connections opened in total: ${opened}; held open at once (attackers' view): median ${q(serverConnections, 0.5)}, max ${Math.max(...serverConnections)}`,
  );
  console.log(
    `keyed POST /api/chat: ${chats.length} answered, p50 ${ms(q(chats, 0.5))}, p99 ${ms(q(chats, 0.99))}, max ${ms(Math.max(...chats))}`,
  );
  console.log(
    `GET /healthz: ${probes.length} answered, p50 ${ms(q(probes, 0.5))}, p99 ${ms(q(probes, 0.99))}, max ${ms(Math.max(...probes))}`,
  );
  console.log(`failed keyed requests or probes: ${failures}`);
  process.exit(failures === 0 ? 0 : 1);
}
