/**
 * Cost of authenticating a request on the hot path: `authenticate(authorizationHeader)` as the ingress
 * and the control plane call it, with the revocation list in memory (as replicated from NATS KV).
 *
 *   node dist/bench/auth.js [--seconds 2] [--tokens 20000]
 *
 * cached:   the same token again (the common case: an emitter sends many requests with one token)
 *           → one Map lookup by header, an expiry check and a revocation lookup; measured with the
 *           same header string and with a new string per call (as read from a socket).
 * uncached: every token seen for the first time → Ed25519 signature check and claim validation
 *           (once per token per process; then it is cached).
 * Needs no servers: keys are generated in memory. Prints one JSON document.
 */
import { cpus } from 'node:os';
import { issueAccessToken, JwtAuthenticator, type RevocationList } from '../shared/auth/access-tokens.js';
import { EphemeralKeys } from '../shared/auth/signing-keys.js';

const ISSUER = 'https://meterline.example.com';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] ? Number(process.argv[i + 1]) : fallback;
}

interface Measure {
  ops: number;
  ns_per_op: number;
  ops_per_s: number;
}

function summarize(ops: number, ns: bigint): Measure {
  const perOp = Number(ns) / ops;
  return { ops, ns_per_op: Math.round(perOp), ops_per_s: Math.round(1e9 / perOp) };
}

async function main(): Promise<void> {
  const seconds = arg('seconds', 2);
  const tokenCount = arg('tokens', 20_000);
  const keys = await EphemeralKeys.generate();
  const claims = { accountId: 'acct_bench', userId: 'usr_bench', clientId: 'cli_bench', scopes: ['write'] as const };

  // A revocation list holding 10,000 revoked ids, as the KV watch keeps it.
  const revoked = new Map<string, number>();
  for (let i = 0; i < 10_000; i++) revoked.set(`revoked-${i}`, Date.now() / 1000 + 3600);
  const revocations: RevocationList = { isRevoked: (jti) => revoked.has(jti) };

  // Issuing (the token endpoint's signing cost, for scale).
  const headers: string[] = [];
  let t0 = process.hrtime.bigint();
  for (let i = 0; i < tokenCount; i++)
    headers.push(`Bearer ${(await issueAccessToken(keys, claims, { issuer: ISSUER, ttlSeconds: 3600 })).token}`);
  const issue = summarize(tokenCount, process.hrtime.bigint() - t0);

  // Uncached: a fresh authenticator whose cache holds them all, each token verified once.
  const cold = new JwtAuthenticator(keys, ISSUER, revocations, tokenCount + 1);
  for (let i = 0; i < 200; i++) await cold.authenticate(headers[i]); // warm-up (JIT), not counted
  t0 = process.hrtime.bigint();
  for (let i = 200; i < tokenCount; i++) await cold.authenticate(headers[i]);
  const uncached = summarize(tokenCount - 200, process.hrtime.bigint() - t0);

  // Cached: the same tokens again, for `seconds`, synchronously as the HTTP layer sees them.
  const hot = cold;
  let ops = 0;
  const deadline = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  t0 = process.hrtime.bigint();
  let now = t0;
  while (now < deadline) {
    for (let i = 0; i < 10_000; i++) {
      const p = hot.authenticate(headers[i % 1000]!);
      if (p instanceof Promise) throw new Error('cached path must not be async');
    }
    ops += 10_000;
    now = process.hrtime.bigint();
  }
  const cached = summarize(ops, now - t0);

  // Cached, with the header arriving as a new flat string each time (as uWS hands it over): the
  // lookup cannot reuse a hash cached on the string object. Copies are made outside the timing.
  let freshOps = 0;
  let freshNs = 0n;
  const freshDeadline = Date.now() + seconds * 1000;
  while (Date.now() < freshDeadline) {
    const batch = Array.from({ length: 50_000 }, (_, i) => Buffer.from(headers[i % 1000]!).toString('latin1'));
    const start = process.hrtime.bigint();
    for (let i = 0; i < batch.length; i++) {
      const p = hot.authenticate(batch[i]!);
      if (p instanceof Promise) throw new Error('cached path must not be async');
    }
    freshNs += process.hrtime.bigint() - start;
    freshOps += batch.length;
  }
  const cachedFresh = summarize(freshOps, freshNs);

  // Cached path when the caller awaits it (as the HTTP layer does with `await authenticate(...)`).
  ops = 0;
  const deadline2 = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  t0 = process.hrtime.bigint();
  now = t0;
  while (now < deadline2) {
    for (let i = 0; i < 10_000; i++) await hot.authenticate(headers[i % 1000]!);
    ops += 10_000;
    now = process.hrtime.bigint();
  }
  const cachedAwaited = summarize(ops, now - t0);

  process.stdout.write(
    JSON.stringify(
      {
        bench: 'auth',
        node: process.version,
        cpu: cpus()[0]?.model,
        algorithm: 'EdDSA (Ed25519)',
        revocation_list_entries: revoked.size,
        authenticate_cached: cached,
        authenticate_cached_fresh_header_string: cachedFresh,
        authenticate_cached_awaited: cachedAwaited,
        authenticate_uncached: uncached,
        issue_access_token: issue,
        note: 'cached = a token already verified by this process; uncached = first sight (signature verification)',
      },
      null,
      2,
    ) + '\n',
  );
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
