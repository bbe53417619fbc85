import t from 'tap';
import { isolatedConfig, testInfra } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { startApiProcess } from '../fixtures/api-process.js';

// A card number of many digits ending in a character the check refuses made a backtracking regex run for
// seconds to hours (each digit doubled it), freezing the whole api process. A fresh process each time:
// V8 compiles a regex only after its first runs, and the first runs are the slowest.
const year = new Date().getUTCFullYear() + 2;
const body = (number: string) =>
  JSON.stringify({ type: 'card', card: { number, exp_month: 12, exp_year: year, cvc: '123' } });

t.test('a hostile card number is refused at once and never blocks the process', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config);
  const acct = await createTestAccount(infra);
  const api = await startApiProcess(t, config);

  for (const [label, number] of [
    ['28 digits + "!"', '4'.repeat(28) + '!'],
    ['40 digits + "!"', '4'.repeat(40) + '!'],
    ['40 grouped digits + "!"', '4242 '.repeat(8) + '4!'],
    [
      'digits over the schema length (the card check must not run on a field the schema refused)',
      '4'.repeat(100) + '!',
    ],
  ] as const) {
    await t.test(label, async (t) => {
      const posted = fetch(`${api.url}/v1/billing/payment-methods`, {
        method: 'POST',
        headers: { ...acct.auth.write, 'content-type': 'application/json' },
        body: body(number),
        signal: AbortSignal.timeout(30_000),
      });
      // Liveness asked while the hostile request is in the process: a blocked event loop would not answer
      // (the deadlines only keep a failing run from hanging until tap's timeout).
      const health = await fetch(`${api.url}/healthz`, { signal: AbortSignal.timeout(30_000) });
      t.equal(health.status, 200, '/healthz answers while the card is checked');
      const res = await posted;
      t.equal(res.status, 422);
      const problem = (await res.json()) as { code: string; errors: { field: string; message: string }[] };
      t.equal(problem.code, 'validation_failed');
      t.same(
        problem.errors.map((e) => e.field),
        ['card.number'],
        'one error, on the number',
      );
      t.notMatch(JSON.stringify(problem), /4444/, 'the number is not echoed');
    });
  }
});
