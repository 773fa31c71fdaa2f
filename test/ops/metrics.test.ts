/**
 * The request metrics as Prometheus reads them: counts kept per label set between scrapes
 * are exact and cumulative across scrapes, per route, method, status and outcome, and every
 * request's duration lands in its route's histogram.
 */
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/routes/ops/metrics.js';

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('request metrics', () => {
  it('count every request and outcome exactly, cumulatively across scrapes', async () => {
    const { registry, requests } = createMetrics();
    const ok = 'plauder_http_requests_total{route="/api/chat",method="POST",status="200"}';
    const refused = 'plauder_http_requests_total{route="/api/chat",method="POST",status="401"}';
    const replies = 'plauder_chat_outcomes_total{endpoint="/api/chat",outcome="reply"}';
    const count = 'plauder_http_request_duration_seconds_count{route="/api/chat"}';

    for (let i = 0; i < 3; i++) requests.answered('/api/chat', 'POST', 200, 0.002);
    requests.answered('/api/chat', 'POST', 401, 0.0005);
    requests.turn('/api/chat', 'reply');
    requests.turn('/api/chat', 'reply');
    let text = await registry.metrics();
    expect(value(text, ok)).toBe(3);
    expect(value(text, refused)).toBe(1);
    expect(value(text, replies)).toBe(2);
    expect(value(text, count)).toBe(4);
    expect(
      value(text, 'plauder_http_request_duration_seconds_bucket{le="0.001",route="/api/chat"}'),
    ).toBe(1);
    expect(value(text, 'plauder_http_request_duration_seconds_sum{route="/api/chat"}')).toBeCloseTo(
      0.0065,
    );

    // A scrape with nothing new changes nothing; what came since is added.
    const ours = (all: string) => all.split('\n').filter((l) => /^plauder_(http|chat)_/.test(l));
    expect(ours(await registry.metrics())).toEqual(ours(text));
    requests.answered('/api/chat', 'POST', 200, 0.002);
    requests.answered('/v1/chat/completions', 'POST', 200, 0.002);
    requests.turn('/api/chat', 'rate_limited');
    text = await registry.metrics();
    expect(value(text, ok)).toBe(4);
    expect(value(text, refused)).toBe(1);
    expect(value(text, replies)).toBe(2);
    expect(
      value(text, 'plauder_chat_outcomes_total{endpoint="/api/chat",outcome="rate_limited"}'),
    ).toBe(1);
    expect(
      value(
        text,
        'plauder_http_requests_total{route="/v1/chat/completions",method="POST",status="200"}',
      ),
    ).toBe(1);
    expect(value(text, count)).toBe(5);
  });

  it('keeps the metrics of two apps apart', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.requests.answered('/api/chat', 'POST', 200, 0.001);
    const series = 'plauder_http_requests_total{route="/api/chat",method="POST",status="200"}';
    expect(value(await a.registry.metrics(), series)).toBe(1);
    expect(value(await b.registry.metrics(), series)).toBeUndefined();
  });
});
