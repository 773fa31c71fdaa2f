/**
 * A real HTTP receiver for webhook tests, on a loopback port. It verifies every
 * delivery's signature with the `standardwebhooks` package (the library receivers use),
 * records it, and answers what the test decides: 2xx, an error, 410, or nothing at all
 * while it is down. A delivery that fails verification is answered 400 and recorded in
 * `rejected`, which a test expects to stay empty.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface WebhookEventBody {
  readonly type: string;
  readonly timestamp: string;
  readonly data: Record<string, any>;
}

export interface Delivery {
  readonly id: string;
  readonly timestamp: number;
  readonly body: string;
  readonly event: WebhookEventBody;
  /** The status the receiver answered. */
  readonly answered: number;
  /** How many deliveries of this id came before this one. */
  readonly attempt: number;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly port: number;
  readonly secret: string;
  /** Every verified delivery, in arrival order. */
  readonly deliveries: Delivery[];
  /** Why deliveries were refused as unverifiable. */
  readonly rejected: string[];
  /** Decides the answer to each delivery (default 204); a promise holds the answer back. */
  answer: (delivery: Omit<Delivery, 'answered'>) => number | Promise<number>;
  /** The deliveries answered with a 2xx: the events the receiver took. */
  accepted(): Delivery[];
  /** Resolves once `predicate` holds (checked on every delivery), or fails after `ms`. */
  waitFor(predicate: () => boolean, ms?: number, what?: string): Promise<void>;
  /** Stops listening (connections are refused) until `start()`. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

export interface ReceiverOptions {
  readonly secret?: string;
  /**
   * The signer's clock when it is not the real one: the timestamp is checked against it
   * (±5 minutes, as the library does) and the signature with the library's own signing.
   */
  readonly clock?: () => number;
  /** Listen on this port (to come back where a receiver was). */
  readonly port?: number;
}

const TOLERANCE_S = 5 * 60;
export const TEST_WEBHOOK_SECRET = `whsec_${Buffer.from('plauder webhook test secret 0123456789').toString('base64')}`;

export async function startWebhookReceiver(
  options: ReceiverOptions = {},
): Promise<WebhookReceiver> {
  const secret = options.secret ?? TEST_WEBHOOK_SECRET;
  const webhook = new Webhook(secret);
  const deliveries: Delivery[] = [];
  const rejected: string[] = [];
  const waiters = new Set<() => void>();
  const seen = new Map<string, number>();

  const verify = (body: string, headers: http.IncomingHttpHeaders): WebhookEventBody => {
    const flat: Record<string, string> = {};
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const value = headers[name];
      if (typeof value !== 'string') throw new Error(`missing ${name}`);
      flat[name] = value;
    }
    if (!options.clock) return webhook.verify(body, flat) as WebhookEventBody;
    const timestamp = Number(flat['webhook-timestamp']);
    if (Math.abs(options.clock() / 1000 - timestamp) > TOLERANCE_S) throw new Error('timestamp');
    const expected = webhook.sign(flat['webhook-id'] ?? '', new Date(timestamp * 1000), body);
    if (!(flat['webhook-signature'] ?? '').split(' ').includes(expected)) {
      throw new Error('signature');
    }
    return JSON.parse(body) as WebhookEventBody;
  };

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let event: WebhookEventBody;
      try {
        if (request.method !== 'POST') throw new Error(`method ${request.method}`);
        if (request.headers['content-type'] !== 'application/json') throw new Error('content-type');
        event = verify(body, request.headers);
      } catch (error) {
        rejected.push((error as Error).message);
        response.writeHead(400).end();
        return;
      }
      const id = String(request.headers['webhook-id']);
      const attempt = seen.get(id) ?? 0;
      seen.set(id, attempt + 1);
      const pending = {
        id,
        timestamp: Number(request.headers['webhook-timestamp']),
        body,
        event,
        attempt,
      };
      void Promise.resolve(receiver.answer(pending)).then((answered) => {
        deliveries.push({ ...pending, answered });
        response.writeHead(answered).end();
        for (const wake of waiters) wake();
      });
    });
  });

  let port = options.port ?? 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();

  const receiver: WebhookReceiver = {
    get url() {
      return `http://127.0.0.1:${port}/hooks/plauder`;
    },
    get port() {
      return port;
    },
    secret,
    deliveries,
    rejected,
    answer: () => 204,
    accepted: () => deliveries.filter((d) => d.answered >= 200 && d.answered < 300),
    waitFor(predicate, ms = 20_000, what = 'the expected deliveries') {
      if (predicate()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${what}; got ${summary(deliveries)}`));
        }, ms);
        const check = () => {
          if (!predicate()) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    start: listen,
  };
  return receiver;
}

function summary(deliveries: readonly Delivery[]): string {
  return JSON.stringify(deliveries.map((d) => `${d.event.type}:${d.answered}`));
}

/** The events taken (2xx), one per event id, by type. */
export function acceptedByType(receiver: WebhookReceiver): Map<string, Delivery[]> {
  const byType = new Map<string, Delivery[]>();
  for (const delivery of receiver.accepted()) {
    byType.set(delivery.event.type, [...(byType.get(delivery.event.type) ?? []), delivery]);
  }
  return byType;
}
