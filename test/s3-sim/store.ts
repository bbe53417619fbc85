import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The S3 simulator's state (test/s3-sim/): buckets, objects and multipart uploads, kept on disk under one directory
 * so a restart keeps them. An object's bytes are a file named by the hash of bucket and key, written whole and
 * renamed into place: like S3, a reader sees the old object or the new one, never half of one.
 */
export interface ObjectMeta {
  key: string;
  size: number;
  etag: string;
  lastModified: string;
  contentType: string;
}
interface Upload {
  bucket: string;
  key: string;
  initiated: string;
  parts: Record<string, { etag: string; size: number }>;
}
interface State {
  buckets: Record<string, { created: string; objects: Record<string, ObjectMeta> }>;
  uploads: Record<string, Upload>;
}

export class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** S3's own rule: every part of a multipart upload but the last is at least 5 MiB. */
export const MIN_PART_BYTES = 5 * 1024 * 1024;

export class SimStore {
  private state: State = { buckets: {}, uploads: {} };
  constructor(private readonly dir: string) {}

  async load(): Promise<void> {
    await mkdir(path.join(this.dir, 'objects'), { recursive: true });
    await mkdir(path.join(this.dir, 'parts'), { recursive: true });
    try {
      this.state = JSON.parse(await readFile(path.join(this.dir, 'state.json'), 'utf8'));
    } catch {
      /* a fresh simulator */
    }
  }

  private async save(): Promise<void> {
    const file = path.join(this.dir, 'state.json');
    await writeFile(`${file}.tmp`, JSON.stringify(this.state));
    await rename(`${file}.tmp`, file);
  }

  private objectFile(bucket: string, key: string): string {
    return path.join(this.dir, 'objects', createHash('sha256').update(`${bucket}\0${key}`).digest('hex'));
  }

  private bucket(name: string) {
    const b = this.state.buckets[name];
    if (!b) throw new S3Error(404, 'NoSuchBucket', 'The specified bucket does not exist');
    return b;
  }

  async createBucket(name: string): Promise<void> {
    if (this.state.buckets[name])
      throw new S3Error(409, 'BucketAlreadyOwnedByYou', 'Your previous request to create the named bucket succeeded');
    this.state.buckets[name] = { created: new Date().toISOString(), objects: {} };
    await this.save();
  }

  hasBucket(name: string): boolean {
    return this.state.buckets[name] !== undefined;
  }

  async putObject(bucket: string, key: string, body: Buffer, contentType: string, etag?: string): Promise<ObjectMeta> {
    const b = this.bucket(bucket);
    const file = this.objectFile(bucket, key);
    const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(tmp, body);
    await rename(tmp, file);
    const meta: ObjectMeta = {
      key,
      size: body.length,
      etag: etag ?? `"${createHash('md5').update(body).digest('hex')}"`,
      lastModified: new Date().toISOString(),
      contentType,
    };
    b.objects[key] = meta;
    await this.save();
    return meta;
  }

  head(bucket: string, key: string): ObjectMeta {
    const meta = this.bucket(bucket).objects[key];
    if (!meta) throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.');
    return meta;
  }

  async get(bucket: string, key: string): Promise<{ meta: ObjectMeta; body: Buffer }> {
    const meta = this.head(bucket, key);
    return { meta, body: await readFile(this.objectFile(bucket, key)) };
  }

  async deleteObject(bucket: string, key: string): Promise<void> {
    const b = this.bucket(bucket);
    if (!b.objects[key]) return;
    delete b.objects[key];
    await rm(this.objectFile(bucket, key), { force: true });
    await this.save();
  }

  /** Keys in UTF-8 binary order, as S3 lists them. */
  list(bucket: string, prefix: string, after: string, max: number): { objects: ObjectMeta[]; truncated: boolean } {
    const keys = Object.keys(this.bucket(bucket).objects)
      .filter((k) => k.startsWith(prefix) && k > after)
      .sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    return { objects: keys.slice(0, max).map((k) => this.bucket(bucket).objects[k]!), truncated: keys.length > max };
  }

  async createUpload(bucket: string, key: string): Promise<string> {
    this.bucket(bucket);
    const id = randomBytes(16).toString('hex');
    this.state.uploads[id] = { bucket, key, initiated: new Date().toISOString(), parts: {} };
    await mkdir(path.join(this.dir, 'parts', id), { recursive: true });
    await this.save();
    return id;
  }

  private upload(bucket: string, key: string, id: string): Upload {
    const u = this.state.uploads[id];
    if (!u || u.bucket !== bucket || u.key !== key)
      throw new S3Error(404, 'NoSuchUpload', 'The specified multipart upload does not exist.');
    return u;
  }

  async putPart(bucket: string, key: string, id: string, n: number, body: Buffer): Promise<string> {
    const u = this.upload(bucket, key, id);
    if (!Number.isInteger(n) || n < 1 || n > 10_000)
      throw new S3Error(400, 'InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive');
    await writeFile(path.join(this.dir, 'parts', id, String(n)), body);
    const etag = `"${createHash('md5').update(body).digest('hex')}"`;
    u.parts[String(n)] = { etag, size: body.length };
    await this.save();
    return etag;
  }

  /** Assembles the listed parts (ascending, ETags matching, all but the last ≥ 5 MiB) into the object, at once. */
  async complete(bucket: string, key: string, id: string, parts: { n: number; etag: string }[]): Promise<ObjectMeta> {
    const u = this.upload(bucket, key, id);
    if (parts.length === 0) throw new S3Error(400, 'MalformedXML', 'You must specify at least one part');
    const bodies: Buffer[] = [];
    const md5s: Buffer[] = [];
    parts.forEach((p, i) => {
      const have = u.parts[String(p.n)];
      if (i > 0 && p.n <= parts[i - 1]!.n)
        throw new S3Error(400, 'InvalidPartOrder', 'The list of parts was not in ascending order.');
      if (!have || have.etag.replaceAll('"', '') !== p.etag.replaceAll('"', ''))
        throw new S3Error(400, 'InvalidPart', 'One or more of the specified parts could not be found.');
      if (i < parts.length - 1 && have.size < MIN_PART_BYTES)
        throw new S3Error(
          400,
          'EntityTooSmall',
          'Your proposed upload is smaller than the minimum allowed object size.',
        );
    });
    for (const p of parts) {
      const body = await readFile(path.join(this.dir, 'parts', id, String(p.n)));
      bodies.push(body);
      md5s.push(createHash('md5').update(body).digest());
    }
    const etag = `"${createHash('md5').update(Buffer.concat(md5s)).digest('hex')}-${parts.length}"`;
    const meta = await this.putObject(bucket, key, Buffer.concat(bodies), 'application/octet-stream', etag);
    delete this.state.uploads[id];
    await rm(path.join(this.dir, 'parts', id), { recursive: true, force: true });
    await this.save();
    return meta;
  }

  async abort(bucket: string, key: string, id: string): Promise<void> {
    this.upload(bucket, key, id);
    delete this.state.uploads[id];
    await rm(path.join(this.dir, 'parts', id), { recursive: true, force: true });
    await this.save();
  }

  uploads(bucket: string): { id: string; key: string; initiated: string }[] {
    this.bucket(bucket);
    return Object.entries(this.state.uploads)
      .filter(([, u]) => u.bucket === bucket)
      .map(([id, u]) => ({ id, key: u.key, initiated: u.initiated }))
      .sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  }
}
