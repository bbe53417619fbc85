import { createHash } from 'node:crypto';
import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { ExportConfig } from '../../../shared/config-exports.js';
import { ValidationError } from '../../../shared/errors.js';
import type { ExportDestination } from './types.js';

/**
 * Where an export's bytes go (docs/exports.md). A sink makes its object visible only whole, on `commit`: a local
 * file is written under a dot-name beside its final name and renamed (atomic on one file system) after an fsync;
 * an S3 object is a multipart upload, which S3 shows only once completed. A crash before commit leaves no
 * object under the final name, and writing the same name again replaces the object whole.
 */
export interface ObjectSink {
  write(chunk: Uint8Array): Promise<void>;
  /** Makes the object visible under its name; returns its size and SHA-256 (hex). */
  commit(): Promise<{ bytes: number; sha256: string }>;
  /** Drops what was written; nothing becomes visible. */
  abort(): Promise<void>;
}

/** The one rule for a local destination's path: relative, inside EXPORTS_LOCAL_ROOT, no `..`, no dot-names. */
export function localPathProblem(p: string): string | null {
  if (p === '' || p === '.') return null;
  if (path.isAbsolute(p) || p.includes('\\') || p.includes('\0')) return 'must be a relative path';
  const parts = p.split('/').filter((s) => s !== '');
  if (parts.some((s) => s === '..' || s.startsWith('.'))) return 'must not hold `..` or names starting with a dot';
  return null;
}

/** A destination the deployment is not set up for is a 422 on `destination.type` (at creation, not at run). */
export function checkDestinationConfigured(d: ExportDestination, c: ExportConfig): void {
  if (d.type === 'local' && !c.EXPORTS_LOCAL_ROOT)
    throw new ValidationError([
      { field: 'destination.type', message: 'local exports are off (EXPORTS_LOCAL_ROOT is not set)' },
    ]);
  if (d.type === 's3' && (!c.EXPORTS_S3_ACCESS_KEY_ID || !c.EXPORTS_S3_SECRET_ACCESS_KEY))
    throw new ValidationError([
      { field: 'destination.type', message: 'S3 exports are off (no EXPORTS_S3_ACCESS_KEY_ID)' },
    ]);
}

/** The object's name under the destination: `<kind>/<kind>_<from>_<to>.<format>` (UTC, basic ISO 8601). */
export function objectName(kind: string, from: Date, to: Date, format: string): string {
  const t = (d: Date) =>
    d
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}Z$/, 'Z');
  return `${kind}/${kind}_${t(from)}_${t(to)}.${format}`;
}

/** The key (S3) or path below EXPORTS_LOCAL_ROOT (local) the object ends up at. */
export function objectKey(d: ExportDestination, name: string): string {
  const base = d.type === 'local' ? d.path : d.prefix;
  const dir = base.split('/').filter(Boolean).join('/');
  return dir === '' ? name : `${dir}/${name}`;
}

/**
 * S3 for one run of exports: the SDK (s3-sink.ts) is loaded and one client made on the run's first S3 object, not
 * before — most deployments export to local files or not at all, and the SDK is a large part of a start-up.
 */
export class LazyS3 {
  private loaded: Promise<{ client: S3Client; open: typeof import('./s3-sink.js').s3Sink }> | undefined;
  constructor(private readonly config: ExportConfig) {}

  sink(bucket: string, key: string): Promise<ObjectSink> {
    this.loaded ??= import('./s3-sink.js').then((m) => ({ client: m.s3Client(this.config), open: m.s3Sink }));
    return this.loaded.then(({ client, open }) => open(client, bucket, key));
  }

  async destroy(): Promise<void> {
    const loaded = await this.loaded?.catch(() => undefined);
    loaded?.client.destroy();
  }
}

export async function openSink(
  d: ExportDestination,
  key: string,
  c: ExportConfig,
  s3: LazyS3,
  runId: string,
): Promise<ObjectSink> {
  if (d.type === 'local') return localSink(path.join(c.EXPORTS_LOCAL_ROOT, key), runId);
  return s3.sink(d.bucket, key);
}

async function localSink(file: string, runId: string): Promise<ObjectSink> {
  await mkdir(path.dirname(file), { recursive: true });
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${runId}.partial`);
  const hash = createHash('sha256');
  let bytes = 0;
  const fh: FileHandle = await open(temp, 'w');
  return {
    async write(chunk) {
      hash.update(chunk);
      bytes += chunk.byteLength;
      await fh.write(chunk);
    },
    async commit() {
      await fh.sync();
      await fh.close();
      await rename(temp, file);
      return { bytes, sha256: hash.digest('hex') };
    },
    async abort() {
      await fh.close().catch(() => undefined);
      await rm(temp, { force: true });
    },
  };
}
