/**
 * The security review's other two reproductions of issue 24 against a running api (`npm start`), to compare
 * builds (docs/limits.md, "Before and after"):
 * - parallel wrong passwords: PAIR_GUESSES sign-in attempts for one email from one address at once, then
 *   SPRAY_GUESSES for as many different emails — how many had their password checked (400) and how many were
 *   told to wait (429). The throttle lets 5 per (address, email) and 20 per address through;
 * - an oversized batch: a refused array of OVERSIZED records on the ingest route, then how long until one
 *   record of the same account is accepted again (with a full bucket before the batch).
 *
 *   node dist/bench/sign-in-and-batch-faults.js --base http://127.0.0.1:8080 --token "$WRITE_TOKEN" \
 *     --client-id cli_… --redirect-uri https://app.example.com/cb --email someone@example.com
 *
 * Prints one JSON document with the load average.
 */
import { request } from 'node:http';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    base: { type: 'string', default: 'http://127.0.0.1:8080' },
    token: { type: 'string' },
    'client-id': { type: 'string' },
    'redirect-uri': { type: 'string' },
    email: { type: 'string' },
    'pair-guesses': { type: 'string', default: '30' },
    'spray-guesses': { type: 'string', default: '40' },
    oversized: { type: 'string', default: '100001' },
  },
});
const base = new URL(values.base!);
const token = values.token ?? '';
const clientId = values['client-id'] ?? '';
const redirectUri = values['redirect-uri'] ?? '';
const email = values.email ?? '';
if (!token || !clientId || !redirectUri || !email)
  throw new Error('--token (scope write), --client-id, --redirect-uri and --email (an existing user) are required');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The sign-in form of an authorization request: its fields and the cookies that go with it. */
async function signInForm(): Promise<{ action: string; fields: Record<string, string>; cookie: string }> {
  const url = new URL('/oauth/authorize', base);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('redirect_uri', redirectUri);
  let res = await fetch(url, { redirect: 'manual' });
  const cookies = new Map<string, string>();
  const keep = (r: Response) => {
    for (const c of r.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
  };
  keep(res);
  for (let i = 0; i < 5 && [302, 303].includes(res.status); i++) {
    const next = new URL(res.headers.get('location')!, url);
    res = await fetch(next, {
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    keep(res);
  }
  const html = await res.text();
  // The page's first form, found by plain search (no regex over the whole page: test/unit/safe-regex.test.ts).
  const lower = html.toLowerCase();
  const open = lower.indexOf('<form');
  const openEnd = lower.indexOf('>', open);
  const close = lower.indexOf('</form>', openEnd);
  if (open < 0 || openEnd < 0 || close < 0)
    throw new Error(`no sign-in form (status ${res.status}): ${html.slice(0, 300)}`);
  const formTag = html.slice(open, openEnd + 1);
  const attr = (tag: string, name: string): string | null => {
    const at = tag.toLowerCase().indexOf(` ${name}="`);
    if (at < 0) return null;
    const from = at + name.length + 3;
    return tag.slice(from, tag.indexOf('"', from)).replaceAll('&amp;', '&');
  };
  const fields: Record<string, string> = {};
  for (let at = lower.indexOf('<input', openEnd); at >= 0 && at < close; at = lower.indexOf('<input', at + 1)) {
    const tag = html.slice(at, lower.indexOf('>', at) + 1);
    const name = attr(tag, 'name');
    if (name) fields[name] = attr(tag, 'value') ?? '';
  }
  return {
    action: new URL(attr(formTag, 'action') ?? url.toString(), url).toString(),
    fields,
    cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
  };
}

/** A form POST from `localAddress` (a loopback address: another client to the throttle); its status. */
function postFrom(localAddress: string, url: string, cookie: string, body: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie,
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

/** `n` sign-in attempts at once from `localAddress`; `emailOf(i)` the email of the i-th. Counts of the statuses. */
async function parallelSignIns(
  localAddress: string,
  n: number,
  emailOf: (i: number) => string,
): Promise<Record<string, number>> {
  const form = await signInForm();
  const statuses = await Promise.all(
    Array.from({ length: n }, (_v, i) =>
      postFrom(
        localAddress,
        form.action,
        form.cookie,
        new URLSearchParams({ ...form.fields, email: emailOf(i), password: `wrong guess ${i}` }).toString(),
      ),
    ),
  );
  const counts: Record<string, number> = {};
  for (const s of statuses) counts[String(s)] = (counts[String(s)] ?? 0) + 1;
  return counts;
}

async function ingest(meterId: string, body: unknown): Promise<number> {
  const r = await fetch(new URL(`/v1/meters/${meterId}/usage`, base), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await r.arrayBuffer();
  return r.status;
}

async function oversizedBatch(): Promise<Record<string, unknown>> {
  const meter = await fetch(new URL('/v1/meters', base), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `batch-faults ${Date.now()}`, unit: 'u', aggregation: 'sum' }),
  });
  if (meter.status !== 201) throw new Error(`creating a meter: ${meter.status} ${await meter.text()}`);
  const meterId = ((await meter.json()) as { id: string }).id;
  await sleep(2_000); // whatever came before, the account's bucket is full again
  const timestamp = new Date(Date.now() - 60_000).toISOString();
  const n = Number(values.oversized);
  // Items that never get looked at: the count alone is refused (about 2 bytes each, within the 1 MiB body).
  const refused = await ingest(meterId, new Array(n).fill(0));
  const started = performance.now();
  const firstAfter = await ingest(meterId, { value: 1, timestamp });
  let status = firstAfter;
  while (status !== 202 && performance.now() - started < 120_000) {
    await sleep(250);
    status = await ingest(meterId, { value: 1, timestamp });
  }
  return {
    records: n,
    oversized_batch_status: refused,
    one_record_right_after: firstAfter,
    seconds_until_one_record_accepted: Number(((performance.now() - started) / 1000).toFixed(2)),
  };
}

async function main(): Promise<void> {
  // Two client addresses, so the first run's failures don't count against the second's address.
  const run = Math.floor(Math.random() * 200) + 20;
  const pair = await parallelSignIns(`127.0.${run}.1`, Number(values['pair-guesses']), () => email);
  const stamp = Date.now();
  const spray = await parallelSignIns(
    `127.0.${run}.2`,
    Number(values['spray-guesses']),
    (i) => `spray${i}.${stamp}@example.com`,
  );
  const batch = await oversizedBatch();
  const [load1] = loadavg();
  process.stdout.write(
    `${JSON.stringify(
      {
        load_average_1m: Number(load1!.toFixed(2)),
        parallel_wrong_passwords_one_email: pair,
        parallel_wrong_passwords_many_emails: spray,
        oversized_batch: batch,
      },
      null,
      2,
    )}\n`,
  );
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
