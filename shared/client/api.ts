/**
 * The typed API client of `meterline/client` (issue 18). Its types (types.ts) are exactly the Static types of
 * the schemas that validate requests and document them in the OpenAPI document (checked at compile time by
 * test/unit/client-types.test.ts), so client, server and `/openapi.json` cannot drift apart. Browser-safe
 * (fetch, URL; no Node module): the web console (services/console/web/src/lib/api.ts) calls the API through it.
 * The emitter (emitter.ts) is Node-only.
 */
import type { AcceptedUsage, BatchResult, Meter, MeterUsage, NewMeter, UsageRecord } from './types.js';

export type {
  AcceptedUsage,
  BatchResult,
  Dimensions,
  Meter,
  MeterScope,
  MeterType,
  MeterUsage,
  NewMeter,
  UsageGroup,
  UsageRecord,
  UsageWindow,
} from './types.js';

export interface UsageQuery {
  start_date?: string;
  end_date?: string;
  window?: 'hour' | 'day' | 'month' | 'none';
  group_by?: string[];
  /** filter[key]=value; an array: any of the values. */
  filter?: Record<string, string | string[]>;
}

/** An answer other than 2xx: the RFC 9457 problem document, and Retry-After (seconds) when the server sent one. */
export class MeterlineError extends Error {
  constructor(
    readonly status: number,
    readonly problem:
      | { code?: string; detail?: string; errors?: { field: string; message: string }[]; request_id?: string }
      | undefined,
    readonly retryAfterSeconds: number | undefined,
    /** The answer as sent, and its X-Request-Id: for an error that is not a problem document (a proxy's page, an OAuth error). */
    readonly body: { text: string; json: unknown; requestId?: string } = { text: '', json: undefined },
  ) {
    super(`meterline ${status}${problem?.code ? ` ${problem.code}` : ''}: ${problem?.detail ?? 'request failed'}`);
  }

  /** 429 and 503: the request was not applied and may be sent again (after retryAfterSeconds). */
  get retryable(): boolean {
    return this.status === 429 || this.status === 503;
  }
}

export interface ClientOptions {
  baseUrl: string;
  /** A bearer token, or a function returning the current one. */
  token: string | (() => string | Promise<string>);
  /** A new token after a 401 (expired or revoked): the request is sent once more with it. */
  refreshToken?: () => Promise<string>;
  fetch?: typeof fetch;
  /** Abort a request without an answer after this long (ms); default: no limit. */
  timeoutMs?: number;
}

/** The query string of GET /v1/meters/{id}/usage for `q` (without `?`). */
export function usageQueryString(q: UsageQuery): string {
  const params = new URLSearchParams();
  for (const k of ['start_date', 'end_date', 'window'] as const) if (q[k]) params.set(k, q[k]!);
  if (q.group_by?.length) params.set('group_by', q.group_by.join(','));
  for (const [k, v] of Object.entries(q.filter ?? {}))
    for (const one of Array.isArray(v) ? v : [v]) params.append(`filter[${k}]`, one);
  return params.toString();
}

export class MeterlineClient {
  private readonly fetch: typeof fetch;

  constructor(private readonly opts: ClientOptions) {
    this.fetch = opts.fetch ?? fetch;
  }

  /**
   * One request, the answer as it came (any status): a string body is sent as is (exact decimals written by
   * hand), anything else as JSON. A kept-alive socket the server closed is retried once; a 401 once with
   * `refreshToken`'s token.
   */
  async send(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Response> {
    const headers = (token: string): Record<string, string> => ({
      authorization: `Bearer ${token}`,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': contentType }),
    });
    const url = new URL(path, this.opts.baseUrl);
    const attempt = async (token: string) => {
      const init: RequestInit = {
        method,
        headers: headers(token),
        ...(this.opts.timeoutMs ? { signal: AbortSignal.timeout(this.opts.timeoutMs) } : {}),
      };
      if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
      try {
        return await this.fetch(url, init);
      } catch (err) {
        if ((err as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw err;
        return this.fetch(url, init);
      }
    };
    const res = await attempt(typeof this.opts.token === 'function' ? await this.opts.token() : this.opts.token);
    if (res.status !== 401 || !this.opts.refreshToken) return res;
    await res.body?.cancel().catch(() => undefined);
    return attempt(await this.opts.refreshToken());
  }

  /** One request; JSON in and out (204: undefined); non-2xx → MeterlineError. */
  async request<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const res = await this.send(method, path, body, contentType);
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch (err) {
      if (res.ok) throw err;
    }
    if (!res.ok) {
      const retryAfter = Number(res.headers.get('retry-after') ?? NaN);
      const problem =
        json && typeof json === 'object' && !Array.isArray(json) ? (json as MeterlineError['problem']) : undefined;
      throw new MeterlineError(
        res.status,
        problem,
        Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined,
        { text, json, requestId: res.headers.get('x-request-id') ?? undefined },
      );
    }
    return json as T;
  }

  /** POST /v1/usage: a batch across meters (1–1,000 records). */
  recordUsage(records: UsageRecord[]): Promise<BatchResult> {
    return this.request('POST', '/v1/usage', records);
  }

  /** POST /v1/meters/{id}/usage: one record. */
  recordMeterUsage(meterId: string, record: Omit<UsageRecord, 'meter_id'>): Promise<AcceptedUsage> {
    return this.request('POST', `/v1/meters/${encodeURIComponent(meterId)}/usage`, record);
  }

  /** POST /v1/meters/{id}/usage with a JSON array: 1–1,000 records of one meter, settled one by one. */
  recordMeterUsageBatch(meterId: string, records: Omit<UsageRecord, 'meter_id'>[]): Promise<BatchResult> {
    return this.request('POST', `/v1/meters/${encodeURIComponent(meterId)}/usage`, records);
  }

  /** GET /v1/meters/{id}/usage with windows, group_by and filters. */
  getUsage(meterId: string, q: UsageQuery = {}): Promise<MeterUsage> {
    const qs = usageQueryString(q);
    return this.request('GET', `/v1/meters/${encodeURIComponent(meterId)}/usage${qs ? `?${qs}` : ''}`);
  }

  createMeter(meter: NewMeter): Promise<Meter> {
    return this.request('POST', '/v1/meters', meter);
  }

  getMeter(meterId: string): Promise<Meter> {
    return this.request('GET', `/v1/meters/${encodeURIComponent(meterId)}`);
  }
}
