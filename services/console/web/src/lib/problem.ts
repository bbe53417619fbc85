/**
 * Errors the console shows. Every failed API call becomes an ApiProblem carrying the server's RFC 9457
 * `detail` (or an OAuth `error_description`), so a page can always say what went wrong — never a blank page.
 */
export interface FieldProblem {
  field: string;
  message: string;
}

export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors: FieldProblem[] = [],
    readonly requestId?: string,
  ) {
    super(detail);
    this.name = 'ApiProblem';
  }
}

/** What a page shows for a failure: a one-line message, the fields at fault, and where to look it up. */
export interface ErrorView {
  message: string;
  fields: FieldProblem[];
  code?: string;
  requestId?: string;
}

const asString = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Reads a failed response: problem+json, an OAuth error body, or (from a proxy, say) anything else. */
export async function problemFromResponse(res: Response): Promise<ApiProblem> {
  return problemFromAnswer(
    res.status,
    res.statusText,
    await res.text().catch(() => ''),
    res.headers.get('x-request-id') ?? undefined,
  );
}

/** The same from an answer already read (the API client's MeterlineError keeps the text and the X-Request-Id). */
export function problemFromAnswer(
  status: number,
  statusText: string,
  text: string,
  requestIdHeader: string | undefined,
): ApiProblem {
  const res = { status, statusText };
  let body: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    body = undefined;
  }
  const requestId = asString(body?.request_id) ?? requestIdHeader;
  const fields = Array.isArray(body?.errors)
    ? (body!.errors as unknown[]).flatMap((e) => {
        const f = e as { field?: unknown; message?: unknown };
        return typeof f?.message === 'string'
          ? [{ field: typeof f.field === 'string' ? f.field : '', message: f.message }]
          : [];
      })
    : [];
  const detail =
    asString(body?.detail) ??
    asString(body?.error_description) ??
    asString(body?.title) ??
    asString(body?.error) ??
    `The server answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}${text && !body ? `: ${text.slice(0, 200)}` : ''}.`;
  const code = asString(body?.code) ?? asString(body?.error) ?? `http_${res.status}`;
  return new ApiProblem(res.status, code, detail, fields, requestId);
}

/** Anything thrown while talking to the API, as the page displays it. */
export function describeError(err: unknown): ErrorView {
  if (err instanceof ApiProblem)
    return { message: err.detail, fields: err.errors, code: err.code, requestId: err.requestId };
  // fetch rejects with a TypeError when the network or the server is unreachable.
  if (err instanceof TypeError)
    return {
      message: `The meterline API could not be reached (${err.message}). Check that it is running, then retry.`,
      fields: [],
    };
  if (err instanceof Error && err.message) return { message: err.message, fields: [] };
  return { message: `Unexpected error: ${String(err)}`, fields: [] };
}
