import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * AWS Signature Version 4 as S3 checks it (header form): the canonical request from the method, the path as sent,
 * the sorted query, the signed headers and the payload hash the client declared; the string to sign; the key
 * derived from the secret, date, region and service. Returns a problem, or null when the signature is right.
 */
const enc = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export function sigV4Problem(
  req: IncomingMessage,
  secrets: Map<string, string>,
): { code: string; message: string } | null {
  const auth = req.headers.authorization ?? '';
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) return { code: 'AccessDenied', message: 'Missing or malformed AWS4-HMAC-SHA256 Authorization header' };
  const [, keyId, date, region, service, signedHeaders, signature] = m as unknown as string[];
  const secret = secrets.get(keyId!);
  if (secret === undefined)
    return { code: 'InvalidAccessKeyId', message: 'The AWS Access Key Id you provided does not exist in our records.' };
  const url = new URL(req.url ?? '/', 'http://sim');
  const rawPath = (req.url ?? '/').split('?')[0]!;
  // S3 signs the path as sent, each segment URI-encoded once.
  const canonicalUri = rawPath
    .split('/')
    .map((s) => enc(decodeURIComponent(s)))
    .join('/');
  const query = [...url.searchParams.entries()]
    .map(([k, v]) => [enc(k), enc(v)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const names = signedHeaders!.split(';');
  const headers = names
    .map((h) => {
      const v = req.headers[h];
      const value = Array.isArray(v) ? v.join(',') : (v ?? '');
      return `${h}:${value.trim().replace(/\s+/g, ' ')}\n`;
    })
    .join('');
  const payloadHash = String(req.headers['x-amz-content-sha256'] ?? 'UNSIGNED-PAYLOAD');
  const canonical = [req.method, canonicalUri, query, headers, signedHeaders, payloadHash].join('\n');
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
  const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
  const kSigning = hmac(hmac(hmac(hmac(`AWS4${secret}`, date!), region!), service!), 'aws4_request');
  const expected = createHmac('sha256', kSigning).update(toSign).digest();
  const given = Buffer.from(signature!, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return {
      code: 'SignatureDoesNotMatch',
      message: 'The request signature we calculated does not match the signature you provided.',
    };
  return null;
}

/** A body whose declared SHA-256 differs from its bytes is refused, as S3 does. */
export function payloadProblem(req: IncomingMessage, body: Buffer): { code: string; message: string } | null {
  const declared = String(req.headers['x-amz-content-sha256'] ?? 'UNSIGNED-PAYLOAD');
  if (declared === 'UNSIGNED-PAYLOAD' || declared.startsWith('STREAMING-')) return null;
  if (createHash('sha256').update(body).digest('hex') !== declared)
    return {
      code: 'XAmzContentSHA256Mismatch',
      message: 'The provided x-amz-content-sha256 header does not match what was computed.',
    };
  return null;
}
