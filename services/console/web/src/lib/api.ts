import { ApiProblem, problemFromResponse } from './problem.js';
import type { TokenSession } from './tokens.js';

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/**
 * A request body already serialised. Prices are exact decimals (up to 9 places, 29 integer digits) that a
 * JavaScript number cannot always hold: the console writes the digits the user typed straight into the JSON.
 */
export class ExactJson {
  constructor(readonly text: string) {}
}

/** `{...fields, [name]: <digits as typed>}` as JSON; throws when the text is not a plain decimal. */
export function withDecimal(fields: Record<string, unknown>, name: string, typed: string): ExactJson {
  const literal = typed.trim();
  if (!/^\d{1,29}(\.\d{1,9})?$/.test(literal)) throw new Error(`${name}: enter a number such as 19.99 (at most 9 decimals).`);
  const rest = JSON.stringify(fields);
  return new ExactJson(`${rest.slice(0, -1)}${rest.length > 2 ? ',' : ''}${JSON.stringify(name)}:${literal}}`);
}

/** A `{data, pagination}` page of any list endpoint (docs/design.md §5). */
export interface ListPage<T> {
  data: T[];
  pagination: { page: number; per_page: number; total: number };
}

/**
 * The console's only way to the server: the public /v1 API with the session's bearer token. A 401 gets
 * one refresh and one retry (the token may have been revoked or have expired in a sleeping tab); every
 * other failure is thrown as an ApiProblem with the server's detail.
 */
export class ApiClient {
  private readonly fetch: Fetch;

  constructor(
    private readonly session: TokenSession,
    private readonly baseUrl = '',
    fetcher?: Fetch,
  ) {
    this.fetch = fetcher ?? ((input, init) => globalThis.fetch(input, init));
  }

  get<T>(path: string, query?: Record<string, string | number | undefined>): Promise<T> {
    return this.json<T>('GET', withQuery(path, query));
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.json<T>('POST', path, body);
  }

  patch<T>(path: string, body?: unknown): Promise<T> {
    return this.json<T>('PATCH', path, body);
  }

  delete(path: string): Promise<void> {
    return this.json<void>('DELETE', path);
  }

  /** A binary download (invoice PDFs): the bytes and the file name the server suggests. */
  async download(path: string): Promise<{ blob: Blob; filename: string | undefined; contentType: string }> {
    const res = await this.send('GET', path);
    const disposition = res.headers.get('content-disposition') ?? '';
    const filename = /filename="([^"]+)"/.exec(disposition)?.[1];
    return { blob: await res.blob(), filename, contentType: res.headers.get('content-type') ?? '' };
  }

  private async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.send(method, path, body);
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    try {
      return (text ? JSON.parse(text) : undefined) as T;
    } catch {
      throw new ApiProblem(res.status, 'malformed_response', `The server answered ${method} ${path} with something that is not JSON.`);
    }
  }

  private async send(method: string, path: string, body?: unknown): Promise<Response> {
    const attempt = async (token: string) =>
      this.fetch(this.baseUrl + path, {
        method,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: body instanceof ExactJson ? body.text : JSON.stringify(body) } : {}),
      });
    let res = await attempt(await this.session.accessToken());
    if (res.status === 401) {
      await res.body?.cancel().catch(() => undefined);
      res = await attempt(await this.session.refresh());
    }
    if (!res.ok) throw await problemFromResponse(res);
    return res;
  }
}

export function withQuery(path: string, query?: Record<string, string | number | undefined>): string {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}
