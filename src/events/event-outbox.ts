/**
 * @module events/event-outbox
 * Records events in the outbox table together with the change that causes them: a
 * caller asks for the write (`record`) and commits it in its own transaction, so an
 * event exists exactly when its change does, also when made by the CLI with no server
 * running. Without a receiver configured nothing is recorded.
 */
import { randomUUID } from 'node:crypto';
import type { EventsRepository } from '../storage/repositories/events-repository.js';
import type { Writes } from '../storage/unit-of-work.js';
import { dedupeKeyOf, eventBody, type PlauderEvent } from './events.js';

export interface EventOutbox {
  /** Whether events are recorded (a receiver is configured). */
  readonly enabled: boolean;
  /** The writes that record `event`, to commit with the change; none when disabled. */
  record(event: PlauderEvent, nowMs: number): Writes;
  /** Tells this process's sender that a recorded change committed (it looks at once). */
  committed(): void;
  /** Registers the sender's wake-up. */
  onCommitted(listener: () => void): void;
}

export function createEventOutbox(events: EventsRepository, enabled: boolean): EventOutbox {
  const listeners: Array<() => void> = [];
  return {
    enabled,
    record(event, nowMs) {
      if (!enabled) return () => {};
      return events.insertion({
        id: newMessageId(),
        type: event.type,
        dedupeKey: dedupeKeyOf(event),
        payload: eventBody(event, nowMs),
        createdAt: nowMs,
      });
    },
    committed() {
      for (const listener of listeners) listener();
    },
    onCommitted(listener) {
      listeners.push(listener);
    },
  };
}

/** `msg_` + 32 hex digits: the `webhook-id`, stable across retries (Standard Webhooks). */
function newMessageId(): string {
  return `msg_${randomUUID().replaceAll('-', '')}`;
}
