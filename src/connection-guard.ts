/**
 * @module connection-guard
 * Keeps a flood of idle or trickling connections from shutting keyed clients out. Node
 * closes a connection that has not sent its headers within the headers timeout, or its
 * whole request within the request timeout (408, see `errors/error-handler.ts`); this caps
 * the number of open connections below the process's file-descriptor limit (past it every
 * accept fails, the database's and the core's sockets included). A new connection beyond
 * the cap closes the oldest connection that has never carried a request (still sending its
 * first headers, or sending nothing), else the oldest idle keep-alive one, else itself: a
 * client that sends its request at once is served while a flood only pushes its own
 * connections out.
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** Descriptors kept free for the database, the core's upstream, logs and files. */
const RESERVED_DESCRIPTORS = 256;

export interface ConnectionGuard {
  /** The cap in force: the configured one, lowered to fit the descriptor limit. */
  readonly maxConnections: number;
  /** Connections closed to make room for new ones (for metrics and tests). */
  evicted(): number;
  /** Every open connection, oldest first (the drain on close walks it). */
  sockets(): Iterable<Socket>;
}

export function guardConnections(server: Server, configuredMax: number): ConnectionGuard {
  const limit = descriptorLimit();
  const maxConnections =
    limit === undefined
      ? configuredMax
      : Math.max(1, Math.min(configuredMax, limit - RESERVED_DESCRIPTORS));
  /** Insertion order is age order: the first non-busy one is the oldest idle one. */
  const open = new Set<Socket>();
  const busy = new WeakMap<Socket, number>();
  const served = new WeakSet<Socket>();
  let evictions = 0;

  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    if (open.size <= maxConnections) return;
    // A socket destroyed whose 'close' has not run yet is still in `open`, but holds
    // nothing: it neither counts nor makes room when chosen.
    let live = 0;
    for (const candidate of open) if (!candidate.destroyed) live++;
    if (live <= maxConnections) return;
    const idle = (candidate: Socket) =>
      candidate !== socket && !candidate.destroyed && !(busy.get(candidate) ?? 0);
    const victim =
      first(open, (candidate) => idle(candidate) && !served.has(candidate)) ??
      first(open, idle) ??
      socket;
    evictions++;
    victim.destroy();
  });
  server.on('request', (request, response) => {
    const socket: Socket = request.socket;
    served.add(socket);
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    response.once('close', () => busy.set(socket, (busy.get(socket) ?? 1) - 1));
  });

  return {
    maxConnections,
    evicted: () => evictions,
    sockets: () => open,
  };
}

/** The oldest socket that `test` accepts (a Set iterates in insertion order). */
function first(open: Set<Socket>, test: (socket: Socket) => boolean): Socket | undefined {
  for (const socket of open) if (test(socket)) return socket;
  return undefined;
}

/** The soft limit of open files (Linux's /proc); undefined where it cannot be read. */
function descriptorLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(
      readFileSync('/proc/self/limits', 'utf8'),
    );
    const value = line?.[1];
    return value === undefined || value === 'unlimited' ? undefined : Number(value);
  } catch {
    return undefined;
  }
}
