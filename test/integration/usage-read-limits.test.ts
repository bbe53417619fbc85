import t from 'tap';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { freePort, isolatedConfig, testInfra, waitUntil, type TestLike } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { createMeter, startUsageApi } from './ingest-helpers.js';

/**
 * Usage reads are bounded per account: a few at once, a short queue, then 503 `busy` with Retry-After; each
 * carries ClickHouse's max_execution_time. The api talks to the real ClickHouse through a forwarding proxy
 * that can hold one account's queries (as a slow, heavy query would stay in ClickHouse), so "a read is
 * running" is a condition the test controls instead of a race it hopes to win.
 */
interface HoldingProxy {
  url: string;
  /** Queries whose text names `accountId` wait until `release()`. */
  hold(accountId: string): void;
  release(): void;
  held(): number;
  /** The URL query strings of forwarded SELECTs on usage tables (settings ride there). */
  usageQueries: string[];
}

async function startHoldingProxy(t: TestLike, target: string): Promise<HoldingProxy> {
  const upstream = new URL(target.split(',')[0]!);
  let holding: string | undefined;
  const waiting: (() => void)[] = [];
  const usageQueries: string[] = [];
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const out = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    out.end(body);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const text = `${decodeURIComponent(req.url ?? '')} ${body.toString('utf8')}`;
      if (/FROM \S*usage_(records|hourly)/.test(text)) usageQueries.push(new URL(req.url ?? '/', 'http://x').search);
      if (holding && text.includes(holding)) waiting.push(() => forward(req, res, body));
      else forward(req, res, body);
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  t.teardown(() => server.closeAllConnections());
  const auth = upstream.username ? `${upstream.username}:${upstream.password}@` : '';
  return {
    url: `http://${auth}127.0.0.1:${port}/`,
    hold: (accountId) => (holding = accountId),
    release: () => {
      holding = undefined;
      for (const go of waiting.splice(0)) go();
    },
    held: () => waiting.length,
    usageQueries,
  };
}

t.test(
  'usage reads: per-account concurrency with a short queue, then 429; max_execution_time on every read',
  async (t) => {
    const base = await isolatedConfig(t, {
      USAGE_QUERIES_PER_ACCOUNT: '2',
      USAGE_QUERY_QUEUE_PER_ACCOUNT: '1',
      USAGE_QUERY_MAX_EXECUTION_SECONDS: '7',
    });
    const proxy = await startHoldingProxy(t, base.CLICKHOUSE_URL);
    const api = await startUsageApi(t, { ...base, CLICKHOUSE_URL: proxy.url });
    const infra = await testInfra(t, base);
    const heavy = await createTestAccount(infra);
    const quiet = await createTestAccount(infra);
    const heavyMeter = await createMeter(infra, heavy.accountId);
    const quietMeter = await createMeter(infra, quiet.accountId);
    const read = (acct: typeof heavy, meterId: string, window: string) =>
      fetch(`${api.url}/v1/meters/${meterId}/usage?window=${window}`, { headers: acct.auth.read }).then(async (r) => ({
        status: r.status,
        headers: r.headers,
        body: (await r.json()) as any,
      }));

    const plain = await read(quiet, quietMeter.id, 'day');
    t.equal(plain.status, 200, 'a read through the proxy works');
    t.ok(
      proxy.usageQueries.length > 0 && proxy.usageQueries.every((q) => /[?&]max_execution_time=7(&|$)/.test(q)),
      'every usage SELECT carries max_execution_time',
    );

    proxy.hold(heavy.accountId);
    // Distinct reads (different windows: not coalesced): two run, one waits in the queue.
    const running = [read(heavy, heavyMeter.id, 'day'), read(heavy, heavyMeter.id, 'hour')];
    await waitUntil(() => proxy.held() === 2, 'two of the heavy account reads are running in ClickHouse');
    const queued = read(heavy, heavyMeter.id, 'month');
    const queuedReads = async () =>
      Number(
        /meterline_usage_reads_gated_total\{[^}]*outcome="queued"[^}]*\} (\d+)/.exec(
          await (await fetch(`${api.url}/metrics`)).text(),
        )?.[1] ?? 0,
      );
    await waitUntil(async () => (await queuedReads()) === 1, 'the third read waits in the queue');
    const refused = await read(heavy, heavyMeter.id, 'none');
    t.equal(refused.status, 503, 'past two running and one queued: refused at once');
    t.equal(refused.body.code, 'busy');
    t.match(refused.headers.get('retry-after'), /^\d+$/);
    t.equal(proxy.held(), 2, 'the queued read did not reach ClickHouse');

    const other = await read(quiet, quietMeter.id, 'hour');
    t.equal(other.status, 200, "another account's read is answered while the heavy account's reads are stuck");

    proxy.release();
    const answers = await Promise.all([...running, queued]);
    t.same(
      answers.map((a) => a.status),
      [200, 200, 200],
      'the running and the queued reads complete once ClickHouse answers',
    );
  },
);
