/**
 * What every readiness probe shares: its result type, its time limit, and URL helpers. Each server's
 * own probe (SELECT 1, NATS INFO, ClickHouse /ping) lives in that server's file.
 */
import http from 'node:http';
import https from 'node:https';
import { errMessage } from './process.js';

export interface ProbeResult {
  ok: boolean;
  /** Why it is not ok (or a short description of what answered). */
  detail?: string;
}

export const PROBE_TIMEOUT_MS = 3_000;

/** A host as it appears in a URL (IPv6 in brackets). */
export function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

export function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** The URL (or comma-separated URL list) with any password replaced, for messages and printed output. */
export function redactUrl(url: string): string {
  return url.split(',').map(redactOne).join(',');
}

function redactOne(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/** GET `url` without keep-alive; resolves with the status and (the first 4 KiB of) the body. */
export function httpGet(url: URL): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.get(url, { agent: false, timeout: PROBE_TIMEOUT_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        if (body.length < 4096) body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to GET ${url.pathname} within ${PROBE_TIMEOUT_MS} ms`)));
    req.on('error', reject);
  });
}

/** Runs a probe, turning any exception into a failed result that says why. */
export async function probing(fn: () => Promise<ProbeResult>): Promise<ProbeResult> {
  try {
    return await fn();
  } catch (e) {
    return { ok: false, detail: errMessage(e) };
  }
}
