import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
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
  /** Sockets per origin, open and idle alike (idle ones are kept, never churned). */
  maxSocketsPerOrigin?: number;
}

export class WebhookSender {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(private readonly opts: SenderOptions) {
    // Every socket may stay open between attempts (maxFreeSockets = maxSockets): closing idle ones above a
    // lower bound made a busy origin open and close connections continuously.
    const perOrigin = opts.maxSocketsPerOrigin ?? 512;
    const agentOpts = {
      keepAlive: true,
      maxSockets: perOrigin,
      maxFreeSockets: perOrigin,
      scheduling: 'lifo' as const,
    };
    this.httpAgent = new http.Agent(agentOpts);
    this.httpsAgent = new https.Agent(agentOpts);
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
    let outcome = await this.request(url, target, req);
    // A kept-alive socket the receiver closed meanwhile fails at once: one retry on a fresh socket.
    if (outcome.staleSocket) outcome = await this.request(url, target, req);
    const { staleSocket: _, ...result } = outcome;
    return { ...result, durationMs: elapsed(), refused: false };
  }

  private request(
    url: URL,
    target: { address: string; family: 4 | 6 },
    req: SendRequest,
  ): Promise<Omit<SendResult, 'durationMs' | 'refused'> & { staleSocket?: boolean }> {
    const isHttps = url.protocol === 'https:';
    const pinned: LookupFunction = (_host, options, cb) => {
      // net asks for every address when it may try several (autoSelectFamily); either way, only the checked one.
      if ((options as { all?: boolean }).all)
        (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [target]);
      else cb(null, target.address, target.family);
    };
    return new Promise((resolve) => {
      let settled = false;
      const finish = (r: Omit<SendResult, 'durationMs' | 'refused'> & { staleSocket?: boolean }) => {
        if (settled) return;
        settled = true;
        resolve(r);
      };
      const r = (isHttps ? https : http).request(
        {
          protocol: url.protocol,
          hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
          port: url.port || (isHttps ? 443 : 80),
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers: { ...req.headers, 'content-length': String(req.body.length) },
          agent: isHttps ? this.httpsAgent : this.httpAgent,
          lookup: pinned,
        },
        (res) => {
          const status = res.statusCode ?? 0;
          // The body is not kept; reading it lets the socket be reused. The timer still bounds it.
          res.on('end', () => clearTimeout(timer));
          res.on('error', () => undefined);
          res.resume();
          if (status >= 200 && status < 300) finish({ ok: true, status, error: null, gone: false });
          else if (status >= 300 && status < 400)
            finish({ ok: false, status, error: `redirect (${status}) not followed`, gone: false });
          else if (status === 410) finish({ ok: false, status, error: 'gone (410): webhook disabled', gone: true });
          else finish({ ok: false, status, error: `HTTP ${status}`, gone: false });
        },
      );
      const timer = setTimeout(() => {
        finish({ ok: false, status: null, error: `timeout after ${this.opts.timeoutMs} ms`, gone: false });
        r.destroy(new Error('timeout'));
      }, this.opts.timeoutMs);
      r.on('error', (err) => {
        clearTimeout(timer);
        const code = (err as NodeJS.ErrnoException).code;
        if (r.reusedSocket && code === 'ECONNRESET')
          return finish({ ok: false, status: null, error: err.message, gone: false, staleSocket: true });
        finish({ ok: false, status: null, error: code ? `${code}: ${err.message}` : err.message, gone: false });
      });
      r.end(req.body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
