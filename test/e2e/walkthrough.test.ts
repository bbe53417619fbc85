import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { repoPath } from '../../shared/paths.js';
import { freePort, isolatedConfig, roleProcessEnv, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { readPdf } from '../fixtures/pdf.js';
import { startMailServer } from '../fixtures/mailbox.js';
import { startConsumer } from '../integration/ingest-helpers.js';
import { startDispatcher } from '../integration/webhook-delivery-helpers.js';

// Five CLI runs (npx) and a month's close on a loaded machine can outlast the runner's 300 s: the file says its own.
t.setTimeout(15 * 60_000);

/** The ```sh blocks of a markdown document, in order (```console blocks are shown, not run). */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/**
 * docs/walkthrough.md, run verbatim: its shell blocks, in order, in one bash (`set -euo pipefail`), against the
 * real api, consumer and dispatcher of this test (the servers `npm start` runs, on this test's own database,
 * ClickHouse database and NATS namespace). What the test sets is what the walkthrough reads from its
 * environment: BASE and RECEIVER_PORT (the ports of this test's api and receiver), and the configuration the
 * `meterline` CLI reads to find this test's servers (DATABASE_URL, NATS_URL, … as `npm start` would have them).
 * Then it checks what a user would: the invoice to the cent, its PDF, and the webhook at the local receiver.
 */
t.test('docs/walkthrough.md bills a first customer, run verbatim', async (t) => {
  // The local SMTP server npm start runs: the walkthrough's customer gets its invoice email there.
  const mail = await startMailServer(t);
  const config = await isolatedConfig(t, { SMTP_URL: mail.url });
  const api = await startApi(t, config);
  await startConsumer(t, config, { maxWaitMs: 50 });
  await startDispatcher(t, config);

  const blocks = shellBlocks(await readFile(repoPath('docs/walkthrough.md'), 'utf8'));
  t.ok(blocks.length >= 7, `the walkthrough has its shell blocks (${blocks.length})`);
  // Inside the checkout, as the walkthrough says to run it: `npx meterline` finds this package's bin.
  await mkdir(repoPath('.data'), { recursive: true });
  const dir = await mkdtemp(join(repoPath('.data'), 'walkthrough-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const receiverPort = await freePort();
  const child = spawn('bash', ['-c', ['set -euo pipefail', ...blocks].join('\n')], {
    cwd: dir,
    env: {
      ...process.env,
      ...roleProcessEnv(config),
      LOG_LEVEL: 'warn',
      BASE: api.url,
      RECEIVER_PORT: String(receiverPort),
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The receiver runs in the background of that bash: stop the whole group, whatever happens.
  t.teardown(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c) => (stdout += c));
  child.stderr!.on('data', (c) => (stderr += c));
  const code = await new Promise<number>((resolve) => {
    const timer = setTimeout(() => {
      stderr += '\n[test] the walkthrough ran over 10 minutes and was stopped';
      process.kill(-child.pid!, 'SIGKILL');
    }, 600_000);
    child.on('exit', (c) => {
      clearTimeout(timer);
      resolve(c ?? 1);
    });
  });
  const output = code === 0 ? '' : `\n${stdout.slice(-2000)}\n${stderr.slice(-3000)}`;
  t.equal(code, 0, `the walkthrough ran to its end${output}`);
  if (code !== 0) return;

  const invoices = (
    await api.infra.pg.query<{ id: string; amount: string; currency: string; status: string; customer_id: string }>(
      'SELECT id, amount::text AS amount, currency, status, customer_id FROM invoices',
    )
  ).rows;
  t.equal(invoices.length, 1, 'one invoice');
  const [invoice] = invoices;
  t.match(invoice, { amount: '27.69', currency: 'USD', status: 'paid' }, '20.00 + 3,845 × 0.002 = 27.69 USD, paid');
  const charges = await api.infra.pg.query(
    'SELECT amount::text AS amount FROM sandbox_charges WHERE idempotency_key LIKE $1',
    [`${invoice!.id}:%`],
  );
  t.same(
    charges.rows.map((r) => r.amount),
    ['27.69'],
    'one charge of 27.69, by the sandbox processor',
  );
  t.match(
    stdout,
    new RegExp(`"id":"${invoice!.id}".*"status":"paid".*"amount":27\\.69`),
    'the invoice as the walkthrough shows it',
  );

  const pdf = readPdf(await readFile(join(dir, 'invoice.pdf')));
  t.equal(pdf.pages, 1);
  t.match(pdf.text, /27\.69/, 'the PDF shows the amount');
  t.match(pdf.text, /Globex/, 'and the customer');
  t.match(
    pdf.text,
    /^INVOICE\nAcme Billing Ltd\n1 Market Street\n94105 San Francisco, CA\nUS\nTax ID 12-3456789 \(us_ein\)\n/,
    'issued by the seller the walkthrough set',
  );
  t.ok(pdf.text.includes('Thank you for your business.'), 'with its footer');

  // The invoice email, as the walkthrough says it arrives (a test clock's customer: marked as a test).
  await waitUntil(async () => (await mail.messages()).length > 0, 'the invoice email');
  const [email] = await mail.messages();
  t.equal(email!.rcptTo, 'billing@globex.example');
  t.equal(email!.headers.from, 'Acme Billing Ltd <invoices@acme.example>');
  t.match(email!.headers.subject, /^\[Test\] Invoice \S+ from Acme Billing Ltd: 27\.69 USD$/);
  t.match(email!.html, 'Test email');
  t.match(stdout, /%PDF-1\.\d/);

  const received = (await readFile(join(dir, 'webhooks.log'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  const paid = received.filter((e) => e.type === 'invoice.paid');
  t.equal(paid.length, 1, 'invoice.paid reached the local receiver once');
  t.match(paid[0].data, { invoice_id: invoice!.id, amount: 27.69, currency: 'USD', external_id: 'globex' });
  t.ok(
    received.some((e) => e.type === 'invoice.created' && e.data.invoice_id === invoice!.id),
    'invoice.created reached it too',
  );
});
