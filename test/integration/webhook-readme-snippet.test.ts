import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { repoPath } from '../../shared/paths.js';
import { freePort, isolatedConfig, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { emit, settledAttempt, startDispatcher } from './webhook-delivery-helpers.js';

/** docs/webhooks.md's "Receiving webhooks" snippet, exactly as a customer would paste it. */
async function readmeSnippet(): Promise<string> {
  const readme = await readFile(repoPath('docs/webhooks.md'), 'utf8');
  const m = /<!-- webhook-verification-snippet -->\s*```js\n([\s\S]*?)\n```/.exec(readme);
  if (!m) throw new Error('docs/webhooks.md has no webhook verification snippet');
  return m[1]!;
}

t.test('the docs/webhooks.md verification snippet accepts a real delivery and rejects a tampered one', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const dispatcher = await startDispatcher(t, config);
  const a = await createTestAccount(api.infra);

  const dir = await mkdtemp(join(tmpdir(), 'meterline-snippet-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'receiver.mjs');
  await writeFile(file, await readmeSnippet());

  const created = await callJson(api.url, a.tokens.write, 'POST', '/v1/webhooks', {
    url: 'http://127.0.0.1:1/placeholder',
    events: ['invoice.paid'],
  });
  const secret = created.body.secret as string;
  const port = await freePort();
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, WEBHOOK_SECRET: secret, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(() => void child.kill('SIGKILL'));
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (l) => lines.push(l));
  const url = `http://127.0.0.1:${port}/webhooks`;
  await waitUntil(
    async () =>
      (await fetch(url, { method: 'POST', body: '{}' })
        .then((r) => r.status)
        .catch(() => 0)) === 400,
    'the snippet to listen (an unsigned request → 400)',
  );
  await callJson(api.url, a.tokens.write, 'PATCH', `/v1/webhooks/${created.body.id}`, { url });

  const data = { invoice_id: 'inv_snippet', amount: 12.5, currency: 'USD' };
  const id = await emit(api.infra, a.accountId, 'invoice.paid', data);
  const attempt = await settledAttempt(dispatcher.infra, created.body.id, id, 1);
  t.match(attempt, { status: 'succeeded', response_status: 204 }, 'the snippet answered 204: the signature verified');
  await waitUntil(() => lines.length > 0, 'the snippet to log the event');
  t.equal(lines.length, 1);
  const prefix = `received invoice.paid ${id} `;
  t.ok(lines[0]!.startsWith(prefix), lines[0]);
  t.same(
    JSON.parse(lines[0]!.slice(prefix.length)),
    { ...data, customer_id: a.customerId },
    'the event data, as sent (and its customer)',
  );

  // The same signed headers over different bytes must not verify.
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,' + Buffer.alloc(32).toString('base64'),
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      id,
      type: 'invoice.paid',
      data: { ...data, amount: 1_000_000 },
      created_at: new Date().toISOString(),
    }),
  });
  t.equal(res.status, 400, 'a forged request is refused');
});
