import { MeterlineClient, MeterlineError } from '../../../../../shared/client/api.js';
import { ApiProblem, problemFromAnswer, problemFromResponse } from './problem.js';
import type { TokenSession } from './tokens.js';

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/**
 * A request body already serialised. Prices are exact decimals (up to 9 places, 29 integer digits) that a
 * JavaScript number cannot always hold: the console writes the digits the user typed straight into the JSON.
 */
export class ExactJson {
  constructor(readonly text: string) {}
}

/** A decimal as the user typed it, for exactJson to write digit for digit. */
export class DecimalText {
  constructor(readonly literal: string) {}
}

/** The typed text as a DecimalText; throws naming `field` when it is not a plain decimal (≤ 29 digits, ≤ 9 decimals). */
export function decimalText(field: string, typed: string): DecimalText {
  const literal = typed.trim();
  if (!/^\d{1,29}(\.\d{1,9})?$/.test(literal))
    throw new Error(`${field}: enter a number such as 19.99 (at most 9 decimals).`);
  return new DecimalText(literal);
}

/** `value` as JSON, each DecimalText in it written as the digits typed (never through a binary float). */
export function exactJson(value: unknown): ExactJson {
  const literals: string[] = [];
  const marker = `dec${Math.random().toString(36).slice(2)}`;
  const text = JSON.stringify(value, (_key, v: unknown) =>
    v instanceof DecimalText ? `${marker}:${literals.push(v.literal) - 1}` : v,
  );
  return new ExactJson(text.replace(new RegExp(`"${marker}:(\\d+)"`, 'g'), (_m, i: string) => literals[Number(i)]!));
}

/** `{...fields, [name]: <digits as typed>}` as JSON; throws when the text is not a plain decimal. */
export function withDecimal(fields: Record<string, unknown>, name: string, typed: string): ExactJson {
  return exactJson({ ...fields, [name]: decimalText(name, typed) });
}

/** A `{data, pagination}` page of any list endpoint (docs/design.md §5). */
export interface ListPage<T> {
  data: T[];
  pagination: { page: number; per_page: number; total: number };
}

/**
 * The console's only way to the server: the public /v1 API through `meterline/client`'s typed client (the
 * same one integrations use; browser-safe) with the session's bearer token. A 401 gets one refresh and one
 * retry (the token may have been revoked or have expired in a sleeping tab); every other failure is thrown as
 * an ApiProblem with the server's detail. Typed calls (`client.getUsage`, `client.getMeter`, …) go straight
 * to the client; the generic ones below serve the routes it has no method for.
 */
export class ApiClient {
  readonly client: MeterlineClient;

  constructor(session: TokenSession, baseUrl = globalThis.location?.origin ?? '', fetcher?: Fetch) {
    const fetch = fetcher ?? ((input: string, init?: RequestInit) => globalThis.fetch(input, init));
    this.client = new MeterlineClient({
      baseUrl,
      token: () => session.accessToken(),
      refreshToken: () => session.refresh(),
      fetch: ((input: string | URL, init?: RequestInit) => fetch(String(input), init)) as typeof globalThis.fetch,
    });
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

  /** A typed call of the client, its failure as the ApiProblem pages show. */
  async typed<T>(call: (client: MeterlineClient) => Promise<T>): Promise<T> {
    try {
      return await call(this.client);
    } catch (err) {
      if (err instanceof MeterlineError) throw problemFromAnswer(err.status, '', err.body.text, err.body.requestId);
      if (err instanceof SyntaxError)
        throw new ApiProblem(200, 'malformed_response', 'The server answered with something that is not JSON.');
      throw err;
    }
  }

  /** A binary download (invoice PDFs): the bytes and the file name the server suggests. */
  async download(path: string): Promise<{ blob: Blob; filename: string | undefined; contentType: string }> {
    const res = await this.client.send('GET', path);
    if (!res.ok) throw await problemFromResponse(res);
    const disposition = res.headers.get('content-disposition') ?? '';
    const filename = /filename="([^"]+)"/.exec(disposition)?.[1];
    return { blob: await res.blob(), filename, contentType: res.headers.get('content-type') ?? '' };
  }

  private json<T>(method: string, path: string, body?: unknown): Promise<T> {
    return this.typed((client) => client.request<T>(method, path, body instanceof ExactJson ? body.text : body));
  }
}

export function withQuery(path: string, query?: Record<string, string | number | undefined>): string {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}
