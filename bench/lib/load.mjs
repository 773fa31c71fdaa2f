/**
 * The three ways the bench loads a server, all from the bench process (the servers run in
 * their own processes):
 *
 * - closedLoop: autocannon, N connections each sending its next request as soon as the
 *   previous answer arrived: the most requests/s the server can do.
 * - openLoop: requests sent on a fixed timetable (rate per second) whatever the server
 *   does, latency measured from each request's *scheduled* send time, so a server that
 *   stalls is charged for the requests that queue behind the stall (no coordinated
 *   omission). Keep-alive agent with a fixed socket pool; a backlog cap drops (and
 *   counts) requests instead of queueing without bound.
 * - sequential: concurrency 1, one keep-alive connection, next request after the answer.
 *
 * A target is { url, path, headers, bodyFor(i) -> string }. Every response status is
 * counted; callers fail a measurement that saw anything but 2xx.
 */
import http from 'node:http';
import autocannon from 'autocannon';

/** p-th percentile (0..100) of an ascending Float64Array, nearest rank. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

function summarise(latencies) {
  const sorted = Float64Array.from(latencies).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: sorted.length,
    meanMs: sum / sorted.length,
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
    p999Ms: percentile(sorted, 99.9),
    maxMs: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

export async function closedLoop(target, { connections, durationS }) {
  // Several instances (target.urls): the connections are spread evenly across them.
  const urls = target.urls ?? [target.url];
  let i = 0;
  const results = await Promise.all(
    urls.map((url, n) =>
      autocannon({
        url: `${url}${target.path}`,
        method: 'POST',
        connections:
          Math.floor(connections / urls.length) + (n < connections % urls.length ? 1 : 0),
        duration: durationS,
        timeout: 10,
        headers: target.headers,
        // One request template rebuilt per request, so bodies (session ids) rotate.
        requests: [
          { method: 'POST', setupRequest: (req) => ({ ...req, body: target.bodyFor(i++) }) },
        ],
      }),
    ),
  );
  const sum = (pick) => results.reduce((n, r) => n + pick(r), 0);
  const duration = Math.max(...results.map((r) => r.duration));
  const requests = sum((r) => r.totalCompletedRequests);
  const statusCounts = {};
  for (const r of results) {
    for (const [status, { count }] of Object.entries(r.statusCodeStats)) {
      statusCounts[status] = (statusCounts[status] ?? 0) + count;
    }
  }
  return {
    kind: 'closed',
    connections,
    instances: urls.length,
    durationS: duration,
    requests,
    rps: sum((r) => r['2xx']) / duration,
    // autocannon records whole milliseconds. With several instances: p50 weighted by
    // requests, p99 and above the worst instance's (an upper bound).
    p50Ms: sum((r) => r.latency.p50 * r.totalCompletedRequests) / Math.max(1, requests),
    p99Ms: Math.max(...results.map((r) => r.latency.p99)),
    p999Ms: Math.max(...results.map((r) => r.latency.p99_9)),
    maxMs: Math.max(...results.map((r) => r.latency.max)),
    statusCounts,
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
  };
}

function send(agent, target, body) {
  return new Promise((resolve) => {
    const req = http.request(
      `${target.url}${target.path}`,
      {
        method: 'POST',
        agent,
        headers: { ...target.headers, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve({ status: res.statusCode }));
        res.on('error', (error) => resolve({ error }));
      },
    );
    req.on('error', (error) => resolve({ error }));
    req.end(body);
  });
}

class Tally {
  statusCounts = {};
  non2xx = 0;
  errors = 0;
  firstError = undefined;
  add({ status, error }) {
    if (error) {
      this.errors++;
      this.firstError ??= error.message;
      return false;
    }
    this.statusCounts[status] = (this.statusCounts[status] ?? 0) + 1;
    if (status < 200 || status > 299) this.non2xx++;
    return status >= 200 && status <= 299;
  }
}

/** One open-loop phase; used for the warm-up and the measurement on the same agent. */
function openLoopPhase(agent, target, { rate, durationS, maxBacklog, drainTimeoutMs, offset }) {
  const total = Math.max(1, Math.round(rate * durationS));
  const intervalMs = 1000 / rate;
  const latencies = [];
  const tally = new Tally();
  let next = 0;
  let inFlight = 0;
  let dropped = 0;
  let maxSendLagMs = 0;
  const start = performance.now() + 2;
  let lastAnswer = start;

  return new Promise((resolve) => {
    let finished = false;
    let drainTimer;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(drainTimer);
      const elapsedS = (lastAnswer - start) / 1000;
      resolve({
        kind: 'open',
        rate,
        durationS,
        scheduled: total,
        sent: total - dropped,
        completed: latencies.length,
        achievedRps: latencies.length / elapsedS,
        dropped,
        unanswered: inFlight,
        maxSendLagMs,
        ...summarise(latencies),
        statusCounts: tally.statusCounts,
        non2xx: tally.non2xx,
        errors: tally.errors,
        firstError: tally.firstError,
      });
    };
    const fire = (intended) => {
      inFlight++;
      send(agent, target, target.bodyFor(offset + next)).then((outcome) => {
        inFlight--;
        const now = performance.now();
        if (tally.add(outcome)) latencies.push(now - intended);
        lastAnswer = now;
        if (next >= total && inFlight === 0) finish();
      });
    };
    const tick = () => {
      const now = performance.now();
      while (next < total && start + next * intervalMs <= now) {
        const intended = start + next * intervalMs;
        maxSendLagMs = Math.max(maxSendLagMs, now - intended);
        if (inFlight >= maxBacklog) dropped++;
        else fire(intended);
        next++;
      }
      if (next < total) {
        setTimeout(tick, Math.max(0, start + next * intervalMs - performance.now()));
      } else if (inFlight === 0) {
        finish();
      } else {
        drainTimer = setTimeout(finish, drainTimeoutMs);
      }
    };
    setTimeout(tick, Math.max(0, start - performance.now()));
  });
}

export async function openLoop(
  target,
  {
    rate,
    durationS,
    warmupS,
    sockets = 64,
    maxBacklog = Math.max(100, Math.round(rate / 4)),
    drainTimeoutMs = 5_000,
  },
) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  try {
    const options = { rate, maxBacklog, drainTimeoutMs };
    const warmup = await openLoopPhase(agent, target, {
      ...options,
      durationS: warmupS,
      offset: 0,
    });
    const result = await openLoopPhase(agent, target, {
      ...options,
      durationS,
      offset: warmup.scheduled,
    });
    return { ...result, sockets, maxBacklog, warmup: pick(warmup) };
  } finally {
    agent.destroy();
  }
}

export async function sequential(target, { durationS, warmupS }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1 });
  try {
    const run = async (seconds, offset) => {
      const latencies = [];
      const tally = new Tally();
      const end = performance.now() + seconds * 1000;
      let i = offset;
      while (performance.now() < end) {
        const body = target.bodyFor(i++);
        const t0 = performance.now();
        const outcome = await send(agent, target, body);
        const ms = performance.now() - t0;
        if (tally.add(outcome)) latencies.push(ms);
      }
      return {
        kind: 'sequential',
        durationS: seconds,
        ...summarise(latencies),
        statusCounts: tally.statusCounts,
        non2xx: tally.non2xx,
        errors: tally.errors,
        firstError: tally.firstError,
        next: i,
      };
    };
    const warmup = await run(warmupS, 0);
    const result = await run(durationS, warmup.next);
    return { ...result, warmup: pick(warmup) };
  } finally {
    agent.destroy();
  }
}

function pick({ non2xx, errors, statusCounts, firstError }) {
  return { non2xx, errors, statusCounts, firstError };
}

/** One request with the whole answer, for checks before a measurement. */
export function request(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent: false,
        headers:
          body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode, headers: res.headers, text, json });
        });
      },
    );
    req.setTimeout(15_000, () => req.destroy(new Error(`timeout: ${method} ${url}`)));
    req.on('error', reject);
    req.end(body);
  });
}
