import type { HttpReply } from './context.js';
import { stringifyJson } from '../money/json.js';
import { pageOf, type PageRequest } from './pagination.js';

/**
 * The one way a route answers. Bodies are serialized with `stringifyJson`, so a `JsonDecimal` anywhere in
 * them is written as an exact JSON number (money never passes through a binary float); everything else
 * serializes exactly as JSON.stringify would.
 */
export function jsonReply(status: number, body: unknown, headers?: Record<string, string>): HttpReply {
  return { status, raw: stringifyJson(body), contentType: 'application/json', headers };
}

export const reply = {
  json: jsonReply,
  ok: (body: unknown): HttpReply => jsonReply(200, body),
  /** 201 with `Location` naming the new resource. */
  created: (body: unknown, location: string): HttpReply => jsonReply(201, body, { Location: location }),
  accepted: (body: unknown): HttpReply => jsonReply(202, body),
  noContent: (): HttpReply => ({ status: 204 }),
  /** JSON already serialized (the usage hot path writes its small replies by hand; a document cached as text). */
  jsonText: (status: number, text: string): HttpReply => ({ status, raw: text, contentType: 'application/json' }),
  /** 101: opens the WebSocket of an upgrade request (`ctx.upgrading`), `data` being the socket's own state. */
  upgrade: (data: object): HttpReply => ({ status: 101, upgrade: data }),
  /** 200 with bytes that are not JSON (a PDF, Prometheus text). */
  file: (bytes: string | Buffer, contentType: string, headers?: Record<string, string>): HttpReply => ({
    status: 200,
    raw: bytes,
    contentType,
    headers,
  }),
  /**
   * 200 with a rendered billing document (invoice, credit note) to save as `<filename>.pdf`. Its status and the
   * address on it can change: clients may keep a copy but must revalidate.
   */
  pdf: (bytes: Uint8Array, filename: string): HttpReply => ({
    status: 200,
    raw: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    contentType: 'application/pdf',
    headers: { 'Content-Disposition': `attachment; filename="${filename}.pdf"`, 'Cache-Control': 'private, no-cache' },
  }),
  /** `{data, pagination: {page, per_page, total}}` for the page the route asked the store for. */
  page: <T>(items: T[], page: PageRequest, total: number): HttpReply => jsonReply(200, pageOf(items, page, total)),
};
