import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { payloadProblem, sigV4Problem } from './sigv4.js';
import { S3Error, SimStore } from './store.js';

/**
 * A small S3-compatible server for the export tests (docs/exports.md): path-style buckets; CreateBucket,
 * HeadBucket, PutObject, GetObject, HeadObject, DeleteObject, ListObjectsV2, multipart upload (create, part,
 * complete, abort, list uploads); every request must carry a valid SigV4 signature of a known key. Errors are
 * S3's XML documents with S3's codes. `/_sim/health` answers the stack's probe.
 */
export interface S3SimOptions {
  host?: string;
  port: number;
  dir: string;
  /** access key id → secret. */
  keys: Map<string, string>;
}

const xmlEscape = (s: string) =>
  s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);

function send(res: ServerResponse, status: number, body = '', headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/xml', ...headers });
  res.end(body);
}

function sendError(res: ServerResponse, status: number, code: string, message: string, head = false): void {
  const xml = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error>`;
  send(res, status, head ? '' : xml);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** aws-chunked bodies (a streaming signature): `<hex size>;chunk-signature=…\r\n<bytes>\r\n` … `0;…\r\n`. */
function decodeChunked(body: Buffer): Buffer {
  const out: Buffer[] = [];
  let i = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', i);
    if (eol < 0) break;
    const size = Number.parseInt(body.subarray(i, eol).toString('latin1').split(';')[0]!, 16);
    if (!size) break;
    out.push(body.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

export async function startS3Sim(o: S3SimOptions): Promise<Server> {
  const store = new SimStore(o.dir);
  await store.load();
  const server = createServer((req, res) => {
    handle(store, o, req, res).catch((err) => {
      if (err instanceof S3Error) sendError(res, err.status, err.code, err.message, req.method === 'HEAD');
      else sendError(res, 500, 'InternalError', String((err as Error)?.message ?? err));
    });
  });
  await new Promise<void>((resolve) => server.listen(o.port, o.host ?? '127.0.0.1', resolve));
  return server;
}

async function handle(store: SimStore, o: S3SimOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sim');
  if (url.pathname === '/_sim/health') return send(res, 200, 'ok', { 'content-type': 'text/plain' });
  const auth = sigV4Problem(req, o.keys);
  if (auth) {
    await readBody(req);
    return sendError(res, 403, auth.code, auth.message, req.method === 'HEAD');
  }
  let body = await readBody(req);
  const payload = payloadProblem(req, body);
  if (payload) return sendError(res, 400, payload.code, payload.message);
  if (
    String(req.headers['content-encoding'] ?? '').includes('aws-chunked') ||
    String(req.headers['x-amz-content-sha256'] ?? '').startsWith('STREAMING-')
  )
    body = decodeChunked(body);
  const [, bucket = '', ...rest] = url.pathname.split('/').map((s) => decodeURIComponent(s));
  const key = rest.join('/');
  const q = url.searchParams;
  const method = req.method ?? 'GET';
  if (!bucket) return sendError(res, 400, 'InvalidRequest', 'path-style requests only: /bucket/key');

  if (!key) {
    if (method === 'PUT') {
      await store.createBucket(bucket);
      return send(res, 200, '', { location: `/${bucket}` });
    }
    if (method === 'HEAD') {
      if (!store.hasBucket(bucket)) throw new S3Error(404, 'NoSuchBucket', 'The specified bucket does not exist');
      return send(res, 200);
    }
    if (method === 'GET' && q.has('uploads')) {
      const uploads = store
        .uploads(bucket)
        .map(
          (u) =>
            `<Upload><Key>${xmlEscape(u.key)}</Key><UploadId>${u.id}</UploadId><Initiated>${u.initiated}</Initiated></Upload>`,
        )
        .join('');
      return send(
        res,
        200,
        `<?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult><Bucket>${xmlEscape(bucket)}</Bucket>${uploads}<IsTruncated>false</IsTruncated></ListMultipartUploadsResult>`,
      );
    }
    if (method === 'GET' && q.get('list-type') === '2') {
      const prefix = q.get('prefix') ?? '';
      const token = q.get('continuation-token');
      const after = token ? Buffer.from(token, 'base64url').toString('utf8') : (q.get('start-after') ?? '');
      const max = Math.min(1000, Number(q.get('max-keys') ?? 1000));
      const { objects, truncated } = store.list(bucket, prefix, after, max);
      const contents = objects
        .map(
          (m) =>
            `<Contents><Key>${xmlEscape(m.key)}</Key><LastModified>${m.lastModified}</LastModified><ETag>${xmlEscape(m.etag)}</ETag><Size>${m.size}</Size><StorageClass>STANDARD</StorageClass></Contents>`,
        )
        .join('');
      const next = truncated
        ? `<NextContinuationToken>${Buffer.from(objects.at(-1)!.key).toString('base64url')}</NextContinuationToken>`
        : '';
      return send(
        res,
        200,
        `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>${xmlEscape(bucket)}</Name><Prefix>${xmlEscape(prefix)}</Prefix><KeyCount>${objects.length}</KeyCount><MaxKeys>${max}</MaxKeys><IsTruncated>${truncated}</IsTruncated>${contents}${next}</ListBucketResult>`,
      );
    }
    return sendError(res, 405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
  }

  const uploadId = q.get('uploadId');
  if (method === 'POST' && q.has('uploads')) {
    const id = await store.createUpload(bucket, key);
    return send(
      res,
      200,
      `<?xml version="1.0" encoding="UTF-8"?><InitiateMultipartUploadResult><Bucket>${xmlEscape(bucket)}</Bucket><Key>${xmlEscape(key)}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`,
    );
  }
  if (method === 'PUT' && uploadId) {
    const etag = await store.putPart(bucket, key, uploadId, Number(q.get('partNumber')), body);
    return send(res, 200, '', { etag });
  }
  if (method === 'POST' && uploadId) {
    const xml = body.toString('utf8');
    const parts = [...xml.matchAll(/<Part>([\s\S]*?)<\/Part>/g)].map((m) => ({
      n: Number(/<PartNumber>(\d+)<\/PartNumber>/.exec(m[1]!)?.[1]),
      etag: (/<ETag>([^<]*)<\/ETag>/.exec(m[1]!)?.[1] ?? '').replaceAll('&quot;', '"'),
    }));
    const meta = await store.complete(bucket, key, uploadId, parts);
    return send(
      res,
      200,
      `<?xml version="1.0" encoding="UTF-8"?><CompleteMultipartUploadResult><Bucket>${xmlEscape(bucket)}</Bucket><Key>${xmlEscape(key)}</Key><ETag>${xmlEscape(meta.etag)}</ETag></CompleteMultipartUploadResult>`,
    );
  }
  if (method === 'DELETE' && uploadId) {
    await store.abort(bucket, key, uploadId);
    return send(res, 204);
  }
  if (method === 'PUT') {
    const meta = await store.putObject(
      bucket,
      key,
      body,
      String(req.headers['content-type'] ?? 'application/octet-stream'),
    );
    return send(res, 200, '', { etag: meta.etag });
  }
  if (method === 'HEAD') {
    const meta = store.head(bucket, key);
    res.writeHead(200, {
      'content-length': meta.size,
      etag: meta.etag,
      'last-modified': new Date(meta.lastModified).toUTCString(),
      'content-type': meta.contentType,
    });
    return void res.end();
  }
  if (method === 'GET') {
    const { meta, body: bytes } = await store.get(bucket, key);
    res.writeHead(200, {
      'content-length': bytes.length,
      etag: meta.etag,
      'last-modified': new Date(meta.lastModified).toUTCString(),
      'content-type': meta.contentType,
    });
    return void res.end(bytes);
  }
  if (method === 'DELETE') {
    await store.deleteObject(bucket, key);
    return send(res, 204);
  }
  return sendError(res, 405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
}
