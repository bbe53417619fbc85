import type { LookupFunction } from 'node:net';
import { Pool } from 'undici';
import { RefusedTargetError, resolveDeliveryAddress, type AddressLookup } from '../../domain/webhooks/url-safety.js';

/**
 * One webhook HTTP request (docs/design.md §9): POST with the given headers and body, success = any 2xx within the
 * timeout, redirects are failures (never followed), 410 asks us to stop. The host is resolved and checked
 * here, at delivery time, and the socket connects to exactly the checked address (`lookup` answers with
 * it, so nothing resolves the name a second time: DNS rebinding cannot redirect the request). TLS still
 * verifies the certificate against the URL's host name.
 */
export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface SendResult {
  ok: boolean;
  status: number | null;
  /** Why it failed, for the delivery log (never the response body). */
  error: string | null;
  durationMs: number;
  /** The SSRF rules refused the target; nothing was sent. */
  refused: boolean;
  gone: boolean;
}

export interface SenderOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  lookup?: AddressLookup;
  /** Connections per origin, open and idle alike (idle ones are kept, never churned). */
  maxSocketsPerOrigin?: number;
  /** A pool unused this long is closed (an origin that stopped receiving, or an address that changed). */
  idlePoolMs?: number;
}

type RequestOutcome = Omit<SendResult, 'durationMs' | 'refused'> & { staleSocket?: boolean };

/** undici's connection pool of one (origin, checked address), and when it last sent. */
interface OriginPool {
  pool: Pool;
  lastUsedMs: number;
  inflight: number;
}

export class WebhookSender {
  /**
   * undici pools keyed by origin and the address checked for it: each pool's sockets connect to that address
   * only. undici costs about half of node:http's CPU per request (docs/benchmarks.md, webhooks).
   */
  private readonly pools = new Map<string, OriginPool>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly opts: SenderOptions) {
    const idleMs = opts.idlePoolMs ?? 5 * 60_000;
    this.sweeper = setInterval(() => this.closeIdlePools(idleMs), Math.min(idleMs, 60_000));
    this.sweeper.unref();
  }

  async send(req: SendRequest): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return {
        ok: false,
        status: null,
        error: 'refused: the URL does not parse',
        durationMs: 0,
        refused: true,
        gone: false,
      };
    }
    let target: { address: string; family: 4 | 6 };
    try {
      target = await resolveDeliveryAddress(url, this.opts.allowPrivate, this.opts.lookup);
    } catch (err) {
      const reason = err instanceof RefusedTargetError ? err.reason : (err as Error).message;
      return {
        ok: false,
        status: null,
        error: `refused: ${reason}`,
        durationMs: elapsed(),
        refused: true,
        gone: false,
      };
    }
    const origin = this.poolFor(url, target);
    origin.inflight++;
    try {
      let outcome = await this.request(origin.pool, url, req);
      // A kept-alive socket the receiver closed meanwhile fails before any answer: one retry on a fresh socket.
      if (outcome.staleSocket) outcome = await this.request(origin.pool, url, req);
      const { staleSocket: _, ...result } = outcome;
      return { ...result, durationMs: elapsed(), refused: false };
    } finally {
      origin.inflight--;
      origin.lastUsedMs = Date.now();
    }
  }

  private poolFor(url: URL, target: { address: string; family: 4 | 6 }): OriginPool {
    const key = `${url.origin} ${target.address}`;
    let entry = this.pools.get(key);
    if (!entry) {
      const pinned: LookupFunction = (_host, options, cb) => {
        // net asks for every address when it may try several (autoSelectFamily); either way, only the checked one.
        if ((options as { all?: boolean }).all)
          (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [target]);
        else cb(null, target.address, target.family);
      };
      const perOrigin = this.opts.maxSocketsPerOrigin ?? 512;
      entry = {
        pool: new Pool(url.origin, {
          connections: perOrigin,
          // One request at a time per connection: a slow answer never delays another webhook's request.
          pipelining: 1,
          // Our own timer (request()) bounds the whole attempt; undici's are a backstop only.
          headersTimeout: this.opts.timeoutMs + 1_000,
          bodyTimeout: this.opts.timeoutMs + 1_000,
          connect: { lookup: pinned, timeout: this.opts.timeoutMs },
          keepAliveTimeout: 60_000,
          keepAliveMaxTimeout: 10 * 60_000,
        }),
        lastUsedMs: Date.now(),
        inflight: 0,
      };
      this.pools.set(key, entry);
    }
    return entry;
  }

  private closeIdlePools(idleMs: number): void {
    const cutoff = Date.now() - idleMs;
    for (const [key, e] of this.pools)
      if (e.inflight === 0 && e.lastUsedMs < cutoff) {
        this.pools.delete(key);
        void e.pool.close().catch(() => undefined);
      }
  }

  private request(pool: Pool, url: URL, req: SendRequest): Promise<RequestOutcome> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (r: RequestOutcome) => {
        if (settled) return;
        settled = true;
        resolve(r);
      };
      const abort = new AbortController();
      const timer = setTimeout(() => {
        finish({ ok: false, status: null, error: `timeout after ${this.opts.timeoutMs} ms`, gone: false });
        abort.abort();
      }, this.opts.timeoutMs);
      pool
        .request({
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers: req.headers,
          body: req.body,
          signal: abort.signal,
        })
        .then(
          (res) => {
            const status = res.statusCode;
            // The body is not kept; reading it lets the socket be reused. The timer still bounds it.
            res.body.dump().then(
              () => clearTimeout(timer),
              () => clearTimeout(timer),
            );
            if (status >= 200 && status < 300) finish({ ok: true, status, error: null, gone: false });
            else if (status >= 300 && status < 400)
              finish({ ok: false, status, error: `redirect (${status}) not followed`, gone: false });
            else if (status === 410) finish({ ok: false, status, error: 'gone (410): webhook disabled', gone: true });
            else finish({ ok: false, status, error: `HTTP ${status}`, gone: false });
          },
          (err: NodeJS.ErrnoException) => {
            clearTimeout(timer);
            // undici's "other side closed" before any answer on a kept-alive socket: the receiver closed it idle.
            if (err.code === 'UND_ERR_SOCKET' || err.code === 'ECONNRESET')
              return finish({ ok: false, status: null, error: err.message, gone: false, staleSocket: true });
            const code = err.code ?? (err.cause as NodeJS.ErrnoException | undefined)?.code;
            finish({ ok: false, status: null, error: code ? `${code}: ${err.message}` : err.message, gone: false });
          },
        );
    });
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const e of this.pools.values()) void e.pool.destroy().catch(() => undefined);
    this.pools.clear();
  }
}
