/**
 * What an exact unique count over 1 M distinct values costs on this ClickHouse at the least (issue 18: the
 * unique-counts reads are ~0.5–1.5 s against the 50 ms read target). A private ClickHouse gets the bench's
 * data shape (bench/phases/dimension-reads.ts: record n has user n mod --users, region n mod 4, hours spread
 * evenly over 30 days) as one row per (hour, region, user) — the per-hour distinct sets, exploded — and each
 * union is timed alone (median of --repeat, after one warm-up), straight in ClickHouse, no api:
 *
 *   u128     uniqExact over 128-bit hashes of the values: what exactness over strings needs (the read path today)
 *   u64      uniqExact over 64-bit hashes: ~5× fewer bytes, but two users may collide — not exact
 *   u32      uniqExact over dense 32-bit ids: exact, but needs a per-meter value → id dictionary
 *   scan     count() of the same rows: reading them at all
 *   id-sets  one row per (hour, region) holding its sorted dense ids (Array(UInt32)), sent as RowBinary and
 *            counted in this process with bitsets — every day window, every region, each (day, region) cell
 *            and the whole range, i.e. the `day windows, group_by=region` read: ClickHouse's part and ours
 *
 *   node dist/bench/unique-union-floor.js [--records 2000000] [--users 1000000] [--repeat 7]
 *
 * Prints one JSON document; every variant's count is checked against --users (exact).
 */
import { Agent, request } from 'node:http';
import { startPrivateServers } from './private-servers.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] ? Number(process.argv[i + 1]) : fallback;
}

const HOURS = 720;
const GROUPS = 4;
const round1 = (x: number) => Math.round(x * 10) / 10;

const agent = new Agent({ keepAlive: true });

/** One HTTP request to ClickHouse (node:http: undici's fetch took ~2× as long for an 8 MB body), the body as bytes. */
function post(url: URL, sql: string): Promise<Buffer> {
  const auth = url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: '/', method: 'POST', auth, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        if (res.statusCode !== 200) reject(new Error(`${res.statusCode}: ${body.toString('utf8').slice(0, 500)}`));
        else resolve(body);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(sql);
  });
}

function varint(buf: Buffer, at: { pos: number }): number {
  let out = 0;
  let shift = 0;
  for (;;) {
    const b = buf[at.pos++]!;
    out += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return out;
    shift += 7;
  }
}

/** Test-and-set of bit `id`: 1 when it was not set yet. */
function add(bits: Uint32Array, id: number): number {
  const w = id >>> 5;
  const m = 1 << (id & 31);
  const v = bits[w]!;
  if (v & m) return 0;
  bits[w] = v | m;
  return 1;
}

/**
 * Counts of the `day windows, group_by=region` read from RowBinary rows (hour Int64, region UInt8, ids
 * Array(UInt32)) sorted by hour: distinct ids per (day, region), per day, per region and overall.
 */
function countIdSets(
  body: Buffer,
  maxId: number,
  firstHour: number,
): { total: number; days: number[]; groups: number[]; cells: number[][] } {
  const words = (maxId >>> 5) + 1;
  const overall = new Uint32Array(words);
  const groupBits = Array.from({ length: GROUPS }, () => new Uint32Array(words));
  const dayBits = new Uint32Array(words);
  const cellBits = Array.from({ length: GROUPS }, () => new Uint32Array(words));
  const out = { total: 0, days: [] as number[], groups: new Array<number>(GROUPS).fill(0), cells: [] as number[][] };
  let day = -1;
  let scratch = new Uint32Array(1024);
  const at = { pos: 0 };
  while (at.pos < body.length) {
    const hour = Number(body.readBigInt64LE(at.pos));
    at.pos += 8;
    const g = body[at.pos++]!;
    const n = varint(body, at);
    const d = Math.floor((hour - firstHour) / 24);
    if (d !== day) {
      day = d;
      out.days.push(0);
      out.cells.push(new Array<number>(GROUPS).fill(0));
      dayBits.fill(0);
      for (const c of cellBits) c.fill(0);
    }
    // The ids as a Uint32Array: a view when the offset is aligned, else copied.
    let ids: Uint32Array;
    if ((body.byteOffset + at.pos) % 4 === 0) ids = new Uint32Array(body.buffer, body.byteOffset + at.pos, n);
    else {
      if (scratch.length < n) scratch = new Uint32Array(n * 2);
      body.copy(Buffer.from(scratch.buffer), 0, at.pos, at.pos + n * 4);
      ids = scratch.subarray(0, n);
    }
    at.pos += n * 4;
    const cell = cellBits[g]!;
    const group = groupBits[g]!;
    const cells = out.cells[out.cells.length - 1]!;
    let inCell = 0;
    let inDay = 0;
    let inGroup = 0;
    let inTotal = 0;
    for (let i = 0; i < n; i++) {
      const id = ids[i]!;
      // Each set below contains the one before it: an id already in the cell is in all of them.
      if (!add(cell, id)) continue;
      inCell++;
      inGroup += add(group, id);
      if (add(dayBits, id)) {
        inDay++;
        inTotal += add(overall, id);
      }
    }
    cells[g]! += inCell;
    out.days[out.days.length - 1]! += inDay;
    out.groups[g]! += inGroup;
    out.total += inTotal;
  }
  return out;
}

async function timed<T>(
  repeat: number,
  run: () => Promise<T>,
): Promise<{ median_ms: number; max_ms: number; value: T }> {
  let value = await run(); // warm-up: caches, V8's compile
  const times: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const t0 = performance.now();
    value = await run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { median_ms: round1(times[Math.floor(times.length / 2)]!), max_ms: round1(times[times.length - 1]!), value };
}

async function main(): Promise<void> {
  const records = arg('records', 2_000_000);
  const users = arg('users', 1_000_000);
  const repeat = arg('repeat', 7);
  const servers = await startPrivateServers(64 * 1024 ** 2);
  const url = new URL(servers.clickhouseUrl);
  const q = (sql: string) => post(url, sql);
  try {
    const firstHour = 490_000;
    await q('CREATE DATABASE floor');
    await q(
      `CREATE TABLE floor.entries (hour Int64, g UInt8, h128 FixedString(16), h64 UInt64, id UInt32) ENGINE = MergeTree ORDER BY (hour, g, id)`,
    );
    await q(`INSERT INTO floor.entries SELECT DISTINCT ${firstHour} + intDiv(number * ${HOURS}, ${records}) AS hour, toUInt8(number % ${GROUPS}),
      sipHash128(concat('user-', toString(number % ${users}))), sipHash64(concat('user-', toString(number % ${users}))), toUInt32(number % ${users})
      FROM numbers(${records})`);
    await q(`CREATE TABLE floor.sets (hour Int64, g UInt8, ids Array(UInt32)) ENGINE = MergeTree ORDER BY (hour, g)`);
    await q(`INSERT INTO floor.sets SELECT hour, g, arraySort(groupArray(id)) FROM floor.entries GROUP BY hour, g`);
    await q('OPTIMIZE TABLE floor.entries FINAL');
    await q('OPTIMIZE TABLE floor.sets FINAL');
    const entries = Number((await q('SELECT count() FROM floor.entries')).toString().trim());
    const number = async (sql: string) => Number((await q(sql)).toString().trim());
    const variants: Record<string, unknown>[] = [];
    for (const [name, sql] of [
      ['u128', 'SELECT uniqExact(h128) FROM floor.entries'],
      ['u64', 'SELECT uniqExact(h64) FROM floor.entries'],
      ['u32', 'SELECT uniqExact(id) FROM floor.entries'],
      ['scan', 'SELECT count() FROM floor.entries'],
    ] as const) {
      const t = await timed(repeat, () => number(sql));
      variants.push({
        variant: name,
        median_ms: t.median_ms,
        max_ms: t.max_ms,
        value: t.value,
        exact: name === 'scan' ? t.value === entries : t.value === users,
      });
    }
    const read = () => q('SELECT hour, g, ids FROM floor.sets ORDER BY hour, g FORMAT RowBinary');
    const fetched = await timed(repeat, read);
    const body = fetched.value;
    const counted = await timed(repeat, async () => countIdSets(body, users - 1, firstHour));
    const c = counted.value;
    variants.push({
      variant: 'id-sets',
      clickhouse_read_ms: fetched.median_ms,
      bytes: body.length,
      bitset_count_ms: counted.median_ms,
      median_ms: round1(fetched.median_ms + counted.median_ms),
      value: c.total,
      days: c.days.length,
      exact: c.total === users && c.groups.every((n) => n === users / GROUPS),
    });
    process.stdout.write(JSON.stringify({ records, users, entries, repeat, variants }, null, 2) + '\n');
  } finally {
    await servers.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
