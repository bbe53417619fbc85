import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { readPdf } from '../fixtures/pdf.js';
import { waitUntil } from '../fixtures/env.js';
import { startReceiver } from '../fixtures/webhook-receiver.js';
import { Decimal, canonicalDecimal } from '../../shared/money/decimal.js';
import { createLogger } from '../../shared/logging.js';
import { SandboxProcessor } from '../../services/domain/payments/sandbox.js';
import type { PaymentProcessor } from '../../services/domain/payments/processor.js';
import { issueCreditNote } from '../../services/domain/billing/credit-notes.js';
import { checkRequest, startDispatcher } from './webhook-delivery-helpers.js';

/**
 * Credit notes and void (docs/design.md §8 Credit notes): an operator credits an open invoice (the next charge is
 * what is left, to the cent; fully credited → paid without a charge) or refunds a paid one through the sandbox
 * processor exactly once (retried request, crash between refund and write); never more than the invoice, also
 * under concurrent requests; void stops every charge and is idempotent; the PDF and the events.
 */
t.test('credit notes and void', async (t) => {
  const w = await billingWorld(t);
  const pg = w.api.infra.pg;
  const admin = w.operator.tokens.admin;
  const plan = await w.product('Plan', 49.99, 'USD');
  const seat = await w.product('Seat', 10, 'USD');
  const post = (path: string, body?: unknown, key?: string, token = admin) =>
    fetch(w.api.url + path, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        ...(key ? { 'idempotency-key': key } : {}),
      },
      body: JSON.stringify(body ?? {}),
    }).then(async (r) => ({ status: r.status, headers: r.headers, body: (await r.json()) as any }));
  const credit = (invoiceId: string, body: unknown, key?: string, token?: string) =>
    post(`/v1/billing/invoices/${invoiceId}/credit-notes`, body, key, token);
  /** A subscription of `a` billed for October 2026 (the run of 2026-11-01): its one invoice. */
  const octoberInvoice = async (a: TestAccount, items: string[]) => {
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: items.map((product_id) => ({ product_id })),
    });
    await w.backdate(sub.id, '2026-10-05T00:00:00Z');
    const run = await w.run('2026-11-01T01:00:00Z');
    t.equal(run.code, 0, run.stderr);
    const list = await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100');
    return list.data.find((i: any) => i.subscription_id === sub.id);
  };
  const chargesOf = async (invoiceId: string) =>
    (
      await pg.query(
        `SELECT amount::text AS amount FROM sandbox_charges WHERE idempotency_key LIKE $1 AND status = 'succeeded' ORDER BY created_at`,
        [`${invoiceId}:%`],
      )
    ).rows.map((r) => canonicalDecimal(r.amount));
  const refundsOf = async (creditNoteId: string) =>
    (
      await pg.query(`SELECT amount::text AS amount, status FROM sandbox_refunds WHERE idempotency_key = $1`, [
        `${creditNoteId}:refund`,
      ])
    ).rows;
  const eventsOf = async (type: string, invoiceId: string) =>
    (
      await pg.query(`SELECT data FROM outbox_events WHERE type = $1 AND data->>'invoice_id' = $2 ORDER BY seq`, [
        type,
        invoiceId,
      ])
    ).rows.map((r) => r.data);

  const receiver = await startReceiver(t);
  await startDispatcher(t, w.config);

  await t.test(
    'open invoice: credit by amount and by line lowers the next charge to the cent; more than is left → 422',
    async (t) => {
      const a = await createTestAccount(w.api.infra, { name: 'Open Co' });
      const hook = await w.made(a.tokens.write, 'POST', '/v1/webhooks', {
        url: receiver.url('/open-co'),
        events: ['credit_note.created', 'invoice.paid'],
        secret: 'whsec_open_co_0123456789abcdef',
      });
      const inv = await octoberInvoice(a, [plan, seat]); // no card: the first attempt fails, the invoice stays open
      t.match(inv, { status: 'open', amount: 59.99, amount_credited: 0, amount_due: 59.99, attempt_count: 1 });

      t.equal(
        (await credit(inv.id, { amount: 1, reason: 'self' }, undefined, a.tokens.write)).status,
        403,
        'a customer cannot credit its own invoice',
      );
      t.equal(
        (await credit(inv.id, { amount: 1, reason: 'self' }, undefined, a.tokens.admin)).status,
        403,
        'not even with its strongest token',
      );

      const byLine = await credit(inv.id, {
        lines: [
          { line: 0, amount: 9.99 },
          { line: 1, quantity: 0.5 },
        ],
        reason: 'Outage on 2026-10-12',
      });
      t.equal(byLine.status, 201, JSON.stringify(byLine.body));
      t.equal(byLine.headers.get('location'), `/v1/billing/credit-notes/${byLine.body.id}`);
      t.match(byLine.body, {
        invoice_id: inv.id,
        customer_id: a.customerId,
        type: 'credit',
        currency: 'USD',
        amount: 14.99,
        reason: 'Outage on 2026-10-12',
        refund: null,
        lines: [
          { invoice_line: 0, description: 'Plan', quantity: null, amount: 9.99 },
          { invoice_line: 1, description: 'Seat', quantity: 0.5, amount: 5 },
        ],
      });
      for (const [body, status, code, field] of [
        [{ lines: [{ line: 0, amount: 40.01 }], reason: 'x' }, 422, 'credit_exceeds_line', 'lines[0].amount'],
        [{ lines: [{ line: 1, quantity: 0.6 }], reason: 'x' }, 422, 'credit_exceeds_line', 'lines[0].quantity'],
        [{ lines: [{ line: 2, amount: 1 }], reason: 'x' }, 422, 'validation_failed', 'lines[0].line'],
        [{ amount: 45.01, reason: 'x' }, 422, 'credit_exceeds_invoice', 'amount'],
        [{ amount: 1.005, reason: 'x' }, 422, 'validation_failed', 'amount'],
        [{ amount: 1, lines: [{ line: 0, amount: 1 }], reason: 'x' }, 422, 'validation_failed', 'amount'],
        [{ lines: [{ line: 0, amount: 1, quantity: 1 }], reason: 'x' }, 422, 'validation_failed', 'lines[0]'],
        [{ amount: 1, reason: '  ' }, 422, 'validation_failed', 'reason'],
      ] as [unknown, number, string, string][]) {
        const r = await credit(inv.id, body);
        t.equal(r.status, status, JSON.stringify(body));
        t.equal(r.body.code, code, `${JSON.stringify(body)}: ${code}`);
        t.ok(
          r.body.errors?.some((e: any) => e.field === field),
          `${JSON.stringify(body)} names ${field}: ${JSON.stringify(r.body.errors)}`,
        );
      }
      t.equal((await credit('inv_doesnotexist0000000000', { amount: 1, reason: 'x' })).status, 404);

      // 45.00 left: two requests of 30 at once — exactly one is taken.
      const both = await Promise.all([
        credit(inv.id, { amount: 30, reason: 'race 1' }),
        credit(inv.id, { amount: 30, reason: 'race 2' }),
      ]);
      t.same(both.map((r) => r.status).sort(), [201, 422], 'one wins, the other is refused');
      t.equal(both.find((r) => r.status === 422)!.body.code, 'credit_exceeds_invoice');
      const now = await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/${inv.id}`);
      t.match(now, { status: 'open', amount: 59.99, amount_credited: 44.99, amount_due: 15 });
      t.same(now.lines, inv.lines, 'the lines are what was invoiced');

      await w.card(a);
      const retry = await w.run('2026-11-02T01:00:00Z'); // the dunning retry
      t.equal(retry.code, 0, retry.stderr);
      t.same(await chargesOf(inv.id), ['15'], 'charged what is left, once, to the cent');
      t.match(await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/${inv.id}`), {
        status: 'paid',
        amount_credited: 44.99,
        amount_due: 0,
      });

      const list = await w.made(a.tokens.read, 'GET', `/v1/billing/credit-notes?invoice_id=${inv.id}`);
      t.equal(list.pagination.total, 2);
      const sum = list.data.reduce((s: Decimal, n: any) => s.plus(String(n.amount)), new Decimal(0));
      t.ok(sum.eq('44.99'), `the notes add up to amount_credited (${sum})`);
      for (const n of list.data)
        t.ok(
          n.lines.reduce((s: Decimal, l: any) => s.plus(String(l.amount)), new Decimal(0)).eq(String(n.amount)),
          `${n.id}: amount = Σ lines`,
        );
      t.same((await w.made(a.tokens.read, 'GET', `/v1/billing/credit-notes/${byLine.body.id}`)).id, byLine.body.id);

      await t.test('the PDF shows the note, its invoice, reason, lines and total', async (t) => {
        const res = await fetch(`${w.api.url}/v1/billing/credit-notes/${byLine.body.id}/download`, {
          headers: a.auth.read,
        });
        t.equal(res.status, 200);
        t.equal(res.headers.get('content-type'), 'application/pdf');
        t.equal(res.headers.get('content-disposition'), `attachment; filename="${byLine.body.id}.pdf"`);
        const pdf = readPdf(Buffer.from(await res.arrayBuffer()));
        for (const expected of [
          'CREDIT NOTE',
          byLine.body.id,
          inv.id,
          a.customerId,
          'Open Co',
          'Reason: Outage on 2026-10-12',
          'Plan',
          'Seat',
          '9.99',
          '5.00',
          '14.99 USD',
          'Deducted from the amount due',
        ]) {
          t.ok(pdf.text.includes(expected), `shows ${expected}`);
        }
        const invoicePdf = readPdf(
          Buffer.from(
            await (
              await fetch(`${w.api.url}/v1/billing/invoices/${inv.id}/download`, { headers: a.auth.read })
            ).arrayBuffer(),
          ),
        );
        for (const expected of ['59.99', 'Credited', '-44.99', '15.00 USD'])
          t.ok(invoicePdf.text.includes(expected), `the invoice PDF shows ${expected}`);
      });

      await t.test('credit_note.created is delivered to the account’s webhook', async (t) => {
        await waitUntil(
          () =>
            receiver.at('/open-co').filter((r) => JSON.parse(r.body.toString()).type === 'credit_note.created')
              .length >= 2,
          'two credit_note.created deliveries',
        );
        const delivered = receiver
          .at('/open-co')
          .map((r) => checkRequest(r, hook.secret ?? 'whsec_open_co_0123456789abcdef'));
        for (const d of delivered) t.same(d.problems, [], `${d.payload.type}: signed`);
        const first = delivered.find((d) => d.payload.data.credit_note_id === byLine.body.id)!;
        t.same(first.payload.data, {
          credit_note_id: byLine.body.id,
          invoice_id: inv.id,
          type: 'credit',
          amount: 14.99,
          currency: 'USD',
          reason: 'Outage on 2026-10-12',
          customer_id: a.customerId,
        });
      });
    },
  );

  await t.test('fully credited: paid without a charge, no further attempt', async (t) => {
    const a = await createTestAccount(w.api.infra);
    const inv = await octoberInvoice(a, [plan]);
    const r = await credit(inv.id, { amount: 49.99, reason: 'Goodwill' });
    t.equal(r.status, 201);
    t.match(await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/${inv.id}`), {
      status: 'paid',
      amount: 49.99,
      amount_credited: 49.99,
      amount_due: 0,
      next_payment_attempt_at: null,
    });
    t.same(await eventsOf('invoice.paid', inv.id), [
      {
        invoice_id: inv.id,
        amount: 49.99,
        currency: 'USD',
        status: 'paid',
        previous_attributes: { status: 'open' },
        customer_id: a.customerId,
      },
    ]);
    await w.card(a);
    await w.run('2026-11-02T01:00:00Z');
    t.same(await chargesOf(inv.id), [], 'nothing charged');
    t.equal((await credit(inv.id, { amount: 0.01, reason: 'more' })).body.code, 'credit_exceeds_invoice');
    t.equal(
      (await post(`/v1/billing/invoices/${inv.id}/pay`, undefined, undefined, a.tokens.write)).body.code,
      'invoice_paid',
    );
  });

  await t.test(
    'a payment attempt in flight: no credit note, no void (its charge is for what was due when it began); uncollectible invoices take notes',
    async (t) => {
      const a = await createTestAccount(w.api.infra);
      const inv = await octoberInvoice(a, [plan]);
      // What step 1 of a payment attempt commits before the processor is called (services/domain/billing/payments.ts).
      await pg.query(
        `INSERT INTO payment_attempts (invoice_id, attempt, idempotency_key, status) VALUES ($1, 2, $2, 'pending')`,
        [inv.id, `${inv.id}:2`],
      );
      await pg.query(`UPDATE invoices SET attempt_count = 2 WHERE id = $1`, [inv.id]);
      t.match(await credit(inv.id, { amount: 1, reason: 'x' }), {
        status: 409,
        body: { code: 'invoice_payment_pending' },
      });
      t.match(await post(`/v1/billing/invoices/${inv.id}/void`), {
        status: 409,
        body: { code: 'invoice_payment_pending' },
      });
      await pg.query(
        `UPDATE payment_attempts SET status = 'failed', failure_code = 'card_declined', completed_at = now() WHERE invoice_id = $1 AND attempt = 2`,
        [inv.id],
      );
      await pg.query(`UPDATE invoices SET status = 'uncollectible', next_payment_attempt_at = NULL WHERE id = $1`, [
        inv.id,
      ]);
      const r = await credit(inv.id, { amount: 9.99, reason: 'Settlement' });
      t.match(r, { status: 201, body: { type: 'credit', amount: 9.99 } });
      t.match(await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/${inv.id}`), {
        status: 'uncollectible',
        amount_due: 40,
      });
      await w.card(a);
      const paid = await post(`/v1/billing/invoices/${inv.id}/pay`, undefined, undefined, a.tokens.write);
      t.match(paid, { status: 200, body: { status: 'paid', amount_due: 0 } });
      t.same(await chargesOf(inv.id), ['40'], 'pay charges what the note left');
    },
  );

  await t.test(
    'paid invoice: refunded once — retried request, crash between refund and write, concurrent over-refund',
    async (t) => {
      const a = await createTestAccount(w.api.infra);
      await w.card(a);
      const inv = await octoberInvoice(a, [plan]);
      t.match(inv, { status: 'paid', amount: 49.99 });
      t.same(await chargesOf(inv.id), ['49.99']);

      const first = await credit(inv.id, { amount: 20, reason: 'Refund: double billing' }, 'refund-key-1');
      t.equal(first.status, 201, JSON.stringify(first.body));
      t.match(first.body, {
        type: 'refund',
        amount: 20,
        refund: { status: 'succeeded', id: /^re_sandbox_/, failure_code: null },
      });
      const again = await credit(inv.id, { amount: 20, reason: 'Refund: double billing' }, 'refund-key-1');
      t.equal(again.status, 201);
      t.equal(again.body.id, first.body.id, 'the retry answers with the same note');
      // The saved answer gone (24 h later, or the first request's process died before saving it): the handler itself finds the note.
      await pg.query(`DELETE FROM idempotency_keys WHERE key = 'refund-key-1'`);
      const rerun = await credit(inv.id, { amount: 20, reason: 'Refund: double billing' }, 'refund-key-1');
      t.equal(rerun.body.id, first.body.id, 'a re-run of the same request finds its note');
      t.same(await refundsOf(first.body.id), [{ amount: '20', status: 'succeeded' }], 'one refund at the processor');

      // A crash after the processor refunded but before the answer was written: the note stays pending.
      const sandbox = new SandboxProcessor(pg);
      const crashing: PaymentProcessor = {
        name: 'sandbox',
        verifyCard: (c) => sandbox.verifyCard(c),
        charge: (r) => sandbox.charge(r),
        refund: async (r) => {
          await sandbox.refund(r);
          throw new Error('process died after the refund');
        },
      };
      const log = createLogger({ level: 'fatal', name: 'credit-notes-test' });
      const crashed = await issueCreditNote(
        { pg, processor: crashing, log, numberPrefix: w.config.INVOICE_NUMBER_PREFIX },
        { invoiceId: inv.id, credit: { kind: 'amount', amount: '5.5' }, reason: 'crash 1', requestKey: 'crash-key-1' },
        new Date(),
      );
      t.match(crashed.note, { refund_status: 'pending' });
      t.same(await refundsOf(crashed.note.id), [{ amount: '5.5', status: 'succeeded' }], 'the processor did refund');
      const resumed = await credit(inv.id, { amount: 5.5, reason: 'crash 1' }, 'crash-key-1');
      t.equal(resumed.body.id, crashed.note.id, 'the retried request completes the same note');
      t.match(resumed.body.refund, { status: 'succeeded' });
      t.same(await refundsOf(crashed.note.id), [{ amount: '5.5', status: 'succeeded' }], 'still one refund');

      const crashed2 = await issueCreditNote(
        { pg, processor: crashing, log, numberPrefix: w.config.INVOICE_NUMBER_PREFIX },
        { invoiceId: inv.id, credit: { kind: 'amount', amount: '4.49' }, reason: 'crash 2', requestKey: null },
        new Date(),
      );
      const run = await w.run('2026-11-01T02:00:00Z');
      t.equal(run.code, 0, run.stderr);
      t.match(
        (await w.made(a.tokens.read, 'GET', `/v1/billing/credit-notes/${crashed2.note.id}`)).refund,
        { status: 'succeeded' },
        'the billing run completed it',
      );
      t.same(await refundsOf(crashed2.note.id), [{ amount: '4.49', status: 'succeeded' }]);

      // 20 left of 49.99: two refunds of 15 at once — one is refunded, the other refused.
      const both = await Promise.all([
        credit(inv.id, { amount: 15, reason: 'r1' }),
        credit(inv.id, { amount: 15, reason: 'r2' }),
      ]);
      t.same(both.map((r) => r.status).sort(), [201, 422]);
      const refunded = (
        await pg.query(
          `SELECT sum(amount)::text AS s, count(*)::int AS n FROM sandbox_refunds WHERE charge_id = (SELECT charge_id FROM sandbox_charges WHERE idempotency_key = $1)`,
          [`${inv.id}:1`],
        )
      ).rows[0];
      t.same(refunded, { s: '44.99', n: 4 }, 'refunds: 20 + 5.50 + 4.49 + 15, each once, never more than charged');
      t.match(await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/${inv.id}`), {
        status: 'paid',
        amount: 49.99,
        amount_credited: 44.99,
        amount_due: 0,
      });

      // A refund the processor refuses gave nothing back: recorded as failed, its amount free to credit again.
      const refusing: PaymentProcessor = {
        ...crashing,
        refund: async () => ({ status: 'failed', failure_code: 'processing_error' }),
      };
      const refused = await issueCreditNote(
        { pg, processor: refusing, log, numberPrefix: w.config.INVOICE_NUMBER_PREFIX },
        { invoiceId: inv.id, credit: { kind: 'amount', amount: '5' }, reason: 'refused', requestKey: null },
        new Date(),
      );
      t.match(refused.note, { refund_status: 'failed', refund_failure_code: 'processing_error', refund_id: null });
      t.match(
        await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/${inv.id}`),
        { amount_credited: 44.99 },
        'the failed refund does not count',
      );
      const last = await credit(inv.id, { amount: 5, reason: 'the last 5' });
      t.equal(last.status, 201);
      t.match(last.body.refund, { status: 'succeeded' });
    },
  );

  await t.test(
    'void: nothing charged afterwards, idempotent, prepaid credit returned; 409 with a code otherwise',
    async (t) => {
      const a = await createTestAccount(w.api.infra);
      const hook = await w.made(a.tokens.write, 'POST', '/v1/webhooks', {
        url: receiver.url('/void-co'),
        events: ['invoice.voided'],
        secret: 'whsec_void_co_0123456789abcdef',
      });
      const grant = await w.made(admin, 'POST', '/v1/billing/credits', {
        account_id: a.accountId,
        amount: 10,
        currency: 'USD',
        description: 'Welcome',
      });
      const inv = await octoberInvoice(a, [plan]);
      t.match(inv, { status: 'open', amount: 39.99 });
      t.equal(
        (await post(`/v1/billing/invoices/${inv.id}/void`, undefined, undefined, a.tokens.write)).status,
        403,
        'a customer cannot void its own invoice',
      );
      const voided = await post(`/v1/billing/invoices/${inv.id}/void`);
      t.equal(voided.status, 200, JSON.stringify(voided.body));
      t.match(voided.body, { id: inv.id, status: 'void', amount: 39.99, amount_due: 0, next_payment_attempt_at: null });
      const twice = await post(`/v1/billing/invoices/${inv.id}/void`);
      t.equal(twice.status, 200);
      t.equal(twice.body.status, 'void');
      t.same(
        await eventsOf('invoice.voided', inv.id),
        [
          {
            invoice_id: inv.id,
            amount: 39.99,
            currency: 'USD',
            status: 'void',
            previous_attributes: { status: 'open' },
            customer_id: a.customerId,
          },
        ],
        'one invoice.voided',
      );
      t.match(
        await w.made(a.tokens.read, 'GET', `/v1/billing/credits/${grant.id}`),
        { remaining: 10 },
        'the credit it had taken is back',
      );

      await w.card(a);
      for (const now of ['2026-11-02T01:00:00Z', '2026-11-04T01:00:00Z', '2026-11-06T01:00:00Z'])
        t.equal((await w.run(now)).code, 0);
      t.same(await chargesOf(inv.id), [], 'no dunning attempt charged it');
      t.equal(
        (await post(`/v1/billing/invoices/${inv.id}/pay`, undefined, undefined, a.tokens.write)).body.code,
        'invoice_void',
      );
      t.equal((await credit(inv.id, { amount: 1, reason: 'x' })).body.code, 'invoice_void');

      const b = await createTestAccount(w.api.infra);
      const credited = await octoberInvoice(b, [plan]);
      t.equal((await credit(credited.id, { amount: 1, reason: 'x' })).status, 201);
      const c = await createTestAccount(w.api.infra);
      await w.card(c);
      const paid = await octoberInvoice(c, [plan]);
      t.match(await post(`/v1/billing/invoices/${credited.id}/void`), {
        status: 409,
        body: { code: 'invoice_credited' },
      });
      t.match(await post(`/v1/billing/invoices/${paid.id}/void`), { status: 409, body: { code: 'invoice_paid' } });
      t.equal((await post('/v1/billing/invoices/inv_doesnotexist0000000000/void')).status, 404);

      await waitUntil(() => receiver.at('/void-co').length >= 1, 'invoice.voided delivered');
      const delivered = checkRequest(receiver.at('/void-co')[0]!, hook.secret ?? 'whsec_void_co_0123456789abcdef');
      t.same(delivered.problems, []);
      t.match(delivered.payload, {
        type: 'invoice.voided',
        data: { invoice_id: inv.id, amount: 39.99, currency: 'USD' },
      });
    },
  );

  await t.test(
    'a discounted, taxed, partly credit-paid invoice: a line is credited its net + tax, tax against the pre-credit total',
    async (t) => {
      // Issue 41 items 3 and 4 end to end: A 100 and B 100 USD, each 25 % off and taxed 20 %: 150 + 30 VAT = 180,
      // 50.00 of it paid by prepaid credit → 130 due.
      const a = await createTestAccount(w.api.infra, { name: 'Discounted Co' });
      const vat = (await w.made(admin, 'POST', '/v1/tax_rates', { name: 'VAT', percentage: 20, inclusive: false })).id;
      const taxed = async (name: string) =>
        (await w.made(admin, 'POST', '/v1/products', { name, price: 100, currency: 'USD', tax_rate_ids: [vat] })).id;
      const [productA, productB] = [await taxed('Product A'), await taxed('Product B')];
      await w.made(admin, 'POST', '/v1/billing/credits', {
        account_id: a.accountId,
        currency: 'USD',
        amount: 50,
        description: 'Prepaid',
      });
      const quarter = await w.made(admin, 'POST', '/v1/coupons', {
        name: 'QUARTER',
        percent_off: 25,
        duration: 'forever',
      });
      const sub = await w.made(admin, 'POST', '/v1/subscriptions', {
        customer_id: a.customerId,
        items: [{ product_id: productA }, { product_id: productB }],
      });
      await w.backdate(sub.id, '2026-10-05T00:00:00Z');
      await w.made(admin, 'PATCH', `/v1/subscriptions/${sub.id}`, { coupon_id: quarter.id });
      // Backdated with its subscription (applied at the real now, it would start in the real current period).
      await pg.query(
        `UPDATE coupon_redemptions SET first_period_start = '2026-10-01T00:00:00Z' WHERE subscription_id = $1`,
        [sub.id],
      );
      const run = await w.run('2026-11-01T01:00:00Z');
      t.equal(run.code, 0, run.stderr);
      const inv = (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data.find(
        (i: any) => i.subscription_id === sub.id,
      );
      t.match(inv, { subtotal: 150, tax: 30, amount: 130, amount_due: 130 });
      t.same(
        inv.lines.map((l: any) => [l.type, l.amount]),
        [
          ['flat', 100],
          ['flat', 100],
          ['discount', -25],
          ['discount', -25],
          ['tax', 30],
          ['credit', -50],
        ],
      );
      const lineOf = (product: string) =>
        inv.lines.findIndex((l: any) => l.type === 'flat' && l.product_id === product);
      // Line A by quantity: its net 75 and the 15 of tax on it (the code before credited 100 + 20).
      const first = await credit(inv.id, { lines: [{ line: lineOf(productA), quantity: 1 }], reason: 'A' });
      t.equal(first.status, 201, JSON.stringify(first.body));
      t.match(first.body, { amount: 90, tax: 15 });
      t.same(
        first.body.lines.map((l: any) => l.amount),
        [75, 15],
      );
      // 40 more by amount: its tax is its share against the 180 the tax was charged on, cumulatively:
      // round(30 × 130 / 180) − round(30 × 90 / 180) = 21.67 − 15 = 6.67 (against the 130 after credit: 9.23).
      const second = await credit(inv.id, { amount: 40, reason: 'rest' });
      t.equal(second.status, 201, JSON.stringify(second.body));
      t.match(second.body, { amount: 40, tax: 6.67 });
      t.match(await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/${inv.id}`), {
        status: 'paid',
        amount_credited: 130,
        amount_due: 0,
      });
      // Nothing is left of the invoice for line B's 75 + 15.
      const more = await credit(inv.id, { lines: [{ line: lineOf(productB), quantity: 1 }], reason: 'B' });
      t.match(more, { status: 422, body: { code: 'credit_exceeds_invoice' } });
    },
  );

  await t.test('reading: read scope, own account only; amount = Σ lines on every invoice', async (t) => {
    const a = await createTestAccount(w.api.infra);
    const other = await createTestAccount(w.api.infra);
    const inv = await octoberInvoice(a, [plan]);
    const note = (await credit(inv.id, { amount: 3, reason: 'Mine' })).body;
    t.equal((await callJson(w.api.url, a.tokens.read, 'GET', `/v1/billing/credit-notes/${note.id}`)).status, 200);
    t.equal((await callJson(w.api.url, other.tokens.read, 'GET', `/v1/billing/credit-notes/${note.id}`)).status, 404);
    t.equal(
      (await callJson(w.api.url, other.tokens.read, 'GET', `/v1/billing/credit-notes/${note.id}/download`)).status,
      404,
    );
    t.same(
      (await callJson(w.api.url, other.tokens.read, 'GET', `/v1/billing/credit-notes?invoice_id=${inv.id}`)).body.data,
      [],
    );
    // Minor units are the invoice currency's: JPY has none.
    const yen = await w.product('Plan (JP)', 1000, 'JPY');
    // A customer bills in one currency (price books): the yen invoice is another customer's.
    const jp = await createTestAccount(w.api.infra);
    const yenInvoice = await octoberInvoice(jp, [yen]);
    const fine = await credit(yenInvoice.id, { amount: 0.5, reason: 'x' });
    t.match(fine, {
      status: 422,
      body: {
        code: 'validation_failed',
        errors: [{ field: 'amount', message: 'must have at most 0 decimal places in JPY' }],
      },
    });
    const third = await credit(yenInvoice.id, { lines: [{ line: 0, quantity: 0.3333 }], reason: 'a third' });
    t.match(
      third.body,
      { amount: 333, lines: [{ quantity: 0.3333, amount: 333 }] },
      '1000 × 0.3333 rounded to whole yen',
    );
    t.match(await w.made(jp.tokens.read, 'GET', `/v1/billing/invoices/${yenInvoice.id}`), {
      amount_credited: 333,
      amount_due: 667,
    });
    const ledger = await pg.query(
      `SELECT i.id, i.amount::text AS amount, i.amount_credited::text AS credited, (SELECT COALESCE(sum(l.amount), 0)::text FROM invoice_lines l WHERE l.invoice_id = i.id) AS lines,
              (SELECT COALESCE(sum(n.amount), 0)::text FROM credit_notes n WHERE n.invoice_id = i.id AND n.refund_status IS DISTINCT FROM 'failed') AS notes FROM invoices i`,
    );
    for (const r of ledger.rows) {
      t.ok(new Decimal(r.amount).eq(r.lines), `${r.id}: amount = Σ lines`);
      t.ok(
        new Decimal(r.credited).eq(r.notes) && new Decimal(r.notes).lte(Decimal.max(r.amount, 0)),
        `${r.id}: amount_credited = Σ notes (but failed refunds) ≤ amount`,
      );
    }
  });
});
