/**
 * @module events/webhook-signature
 * Standard Webhooks signing (https://www.standardwebhooks.com): the maintained reference
 * library signs, so the headers are exactly what every receiver's verifier expects:
 * `webhook-id`, `webhook-timestamp` (Unix seconds of the attempt) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA256 of id.timestamp.body>`).
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

interface SignedHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

export type Signer = (id: string, nowMs: number, body: string) => SignedHeaders;

/** `secret`: `whsec_<base64>` (checked by the config). */
export function createSigner(secret: string): Signer {
  const webhook = new Webhook(secret);
  return (id, nowMs, body) => {
    const seconds = Math.floor(nowMs / 1000);
    return {
      'webhook-id': id,
      'webhook-timestamp': String(seconds),
      'webhook-signature': webhook.sign(id, new Date(seconds * 1000), body),
    };
  };
}

/** A new secret for PLAUDER_WEBHOOK_SECRET: 32 random bytes, `whsec_<base64>`. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
