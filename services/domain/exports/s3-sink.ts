import { createHash } from 'node:crypto';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { ExportConfig } from '../../../shared/config-exports.js';
import type { ObjectSink } from './destinations.js';

/**
 * Exports to S3 (docs/exports.md). Its own module, imported on an S3 export's first run: the SDK is a large part of
 * a process's start-up, and most deployments export to local files or not at all.
 */

/** S3 wants every part but the last ≥ 5 MiB; 8 MiB parts keep at most one part in memory per export. */
const PART_BYTES = 8 * 1024 * 1024;

export function s3Client(c: ExportConfig): S3Client {
  return new S3Client({
    region: c.EXPORTS_S3_REGION,
    endpoint: c.EXPORTS_S3_ENDPOINT || undefined,
    forcePathStyle: c.EXPORTS_S3_FORCE_PATH_STYLE,
    credentials: { accessKeyId: c.EXPORTS_S3_ACCESS_KEY_ID, secretAccessKey: c.EXPORTS_S3_SECRET_ACCESS_KEY },
    // Checksums only where S3 requires them: S3-compatible servers differ on the newer trailing checksums.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
  });
}

export async function s3Sink(client: S3Client, bucket: string, key: string): Promise<ObjectSink> {
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
  const hash = createHash('sha256');
  const parts: { ETag: string; PartNumber: number }[] = [];
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let bytes = 0;
  const upload = async () => {
    const body = Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    const PartNumber = parts.length + 1;
    const r = await client.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber, Body: body }));
    parts.push({ ETag: r.ETag!, PartNumber });
  };
  return {
    async write(chunk) {
      hash.update(chunk);
      bytes += chunk.byteLength;
      pending.push(chunk);
      pendingBytes += chunk.byteLength;
      if (pendingBytes >= PART_BYTES) await upload();
    },
    async commit() {
      if (pendingBytes > 0 || parts.length === 0) await upload();
      await client.send(
        new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }),
      );
      return { bytes, sha256: hash.digest('hex') };
    },
    async abort() {
      await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId })).catch(() => undefined);
    },
  };
}
