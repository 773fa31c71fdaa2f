/**
 * The connection guard (src/connection-guard.ts) against sockets that are destroyed but not
 * yet closed: Node emits 'close' a tick after `destroy()`, and connections that arrive in
 * between must not be let in over the cap because the guard chose such a socket to make
 * room. Driven by hand, with sockets whose 'close' is emitted when the test says so.
 */
import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { guardConnections } from '../../src/connection-guard.js';

class FakeSocket extends EventEmitter {
  destroyed = false;
  destroy() {
    this.destroyed = true;
    return this;
  }
  /** What Node does a tick after `destroy()`. */
  closed() {
    this.emit('close');
  }
}

function setup(cap: number) {
  const server = new EventEmitter();
  guardConnections(server as unknown as Server, cap);
  const sockets: FakeSocket[] = [];
  const connect = () => {
    const socket = new FakeSocket();
    sockets.push(socket);
    server.emit('connection', socket as unknown as Socket);
    return socket;
  };
  const live = () => sockets.filter((socket) => !socket.destroyed).length;
  return { connect, live };
}

describe('the connection guard', () => {
  it('keeps the cap while a destroyed socket has not closed yet', () => {
    const { connect, live } = setup(2);
    const a = connect();
    connect();
    // The server timed A out; its 'close' is still to come.
    a.destroy();
    connect();
    connect();
    connect();
    expect(live()).toBe(2);
    a.closed();
    connect();
    expect(live()).toBe(2);
  });

  it('lets a connection in without closing another while destroyed ones make room', () => {
    const { connect, live } = setup(2);
    const a = connect();
    const b = connect();
    a.destroy();
    const c = connect();
    expect(b.destroyed).toBe(false);
    expect(c.destroyed).toBe(false);
    expect(live()).toBe(2);
  });
});
