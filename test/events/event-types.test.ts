/**
 * The event types are one list (src/events/events.ts): the admin API's schema of the event
 * outbox offers exactly those, and the docs name exactly those (docs/contract.md, "Events").
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/events/events.js';
import { eventListSchema } from '../../src/routes/admin/admin-schemas.js';

describe('event types', () => {
  it('are listed once and offered as such by the admin schema and the docs', () => {
    expect([...EVENT_TYPES].sort()).toEqual([
      'key.created',
      'key.revoked',
      'key.rotated',
      'key.updated',
      'quota.exhausted',
      'quota.warning',
    ]);
    expect(eventListSchema.properties.events.items.properties.type.enum).toEqual(EVENT_TYPES);

    const contract = readFileSync(new URL('../../docs/contract.md', import.meta.url), 'utf8');
    const [, section = ''] = contract.split(/^## Events$/m);
    const [events = ''] = section.split(/^## /m);
    const named = new Set(events.match(/\b(?:key|quota)\.[a-z]+\b/g));
    expect([...named].sort()).toEqual([...EVENT_TYPES].sort());
  });
});
