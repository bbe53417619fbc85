import t, { type Test } from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { insertInvoice } from '../fixtures/invoices.js';
import { readPdf } from '../fixtures/pdf.js';
import { createInvoicePdfPool, runPooled } from '../../services/workers/pool.js';
import { execFileSync } from 'node:child_process';
import { billingWorld } from '../fixtures/billing.js';
import { waitUntil } from '../fixtures/env.js';
import { Decimal } from '../../shared/money/decimal.js';

/**
 * Who issues the invoice (issue 30): the seller's name, address and tax id and a footer line, configured once
 * for the deployment (SELLER_*, INVOICE_FOOTER in shared/config.ts) and printed on every invoice PDF the api
 * renders; the invoice's number (one series for the deployment, the API's `number`) and its due date (on issue:
 * it is charged at once).
 */
t.test('invoice PDF: seller details, footer, number and due date', async (t) => {
  const seller = {
    SELLER_NAME: 'Meterline Ltd',
    // One line in an environment file: \n separates the address lines.
    SELLER_ADDRESS: '1 Market Street\\nSan Francisco, CA 94105',
    SELLER_TAX_ID: 'EIN 12-3456789',
    INVOICE_FOOTER: 'Payment due within 30 days - billing@meterline.example',
  };
  const config = await isolatedConfig(t, seller);
  const api = await startApi(t, config);
  const operator = await createTestAccount(api.infra, { operator: true });
  const a = await createTestAccount(api.infra, { name: 'Acme Widgets Ltd' });
  const made = async (token: string, method: string, path: string, body?: unknown) => {
    const r = await callJson(api.url, token, method, path, body);
    if (r.status >= 300) throw new Error(`set-up ${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const plan = await made(operator.tokens.admin, 'POST', '/v1/products', {
    name: 'Pro plan',
    price: 49.99,
    currency: 'USD',
  });
  const sub = await made(a.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan.id }] });
  const download = async (id: string) => {
    const res = await fetch(`${api.url}/v1/billing/invoices/${id}/download`, {
      headers: { authorization: `Bearer ${a.tokens.read}` },
    });
    t.equal(res.status, 200);
    return readPdf(Buffer.from(await res.arrayBuffer()));
  };

  await t.test('the seller block and the footer, on every page', async (t) => {
    const lines = Array.from({ length: 60 }, (_, i) => ({
      product_id: plan.id,
      description: `Pro plan seat ${i + 1}`,
      quantity: '1',
      unit_price: '49.99',
      amount: '49.99',
    }));
    const id = await insertInvoice(api.infra.pg, {
      accountId: a.accountId,
      customerId: a.customerId,
      subscriptionId: sub.id,
      amount: '2999.40',
      periodStart: '2026-01-01',
      periodEnd: '2026-01-31',
      lines,
    });
    const pdf = await download(id);
    t.ok(pdf.pages >= 2, `60 lines need more than one page (${pdf.pages})`);
    t.match(
      pdf.text,
      /^INVOICE\nMeterline Ltd\n1 Market Street\nSan Francisco, CA 94105\nTax ID EIN 12-3456789\n/,
      'under the title',
    );
    t.notOk(pdf.text.includes('\\n'), 'the address is two lines, not an escaped newline');
    t.equal(pdf.text.split(seller.INVOICE_FOOTER).length - 1, pdf.pages, 'the footer is on every page');
    t.ok(pdf.text.includes('Acme Widgets Ltd'), 'the customer is still billed');
  });

  await t.test('the invoice number and the due date: the API’s, on the PDF', async (t) => {
    const first = await insertInvoice(api.infra.pg, {
      accountId: a.accountId,
      customerId: a.customerId,
      subscriptionId: sub.id,
      amount: '49.99',
      periodStart: '2026-02-01',
      periodEnd: '2026-02-28',
      createdAt: '2026-03-01T01:00:00Z',
      lines: [{ product_id: plan.id, description: 'Pro plan', quantity: '1', unit_price: '49.99', amount: '49.99' }],
    });
    const second = await insertInvoice(api.infra.pg, {
      accountId: a.accountId,
      customerId: a.customerId,
      subscriptionId: sub.id,
      amount: '49.99',
      periodStart: '2026-03-01',
      periodEnd: '2026-03-31',
      createdAt: '2026-04-01T01:00:00Z',
    });
    const [one, two] = [
      await made(a.tokens.read, 'GET', `/v1/billing/invoices/${first}`),
      await made(a.tokens.read, 'GET', `/v1/billing/invoices/${second}`),
    ];
    t.match(one.number, /^\d{6}$/, 'six digits');
    t.equal(Number(two.number), Number(one.number) + 1, 'one series: the next invoice has the next number');
    const pdf = (await download(first)).text;
    t.match(pdf, `Invoice number\n${one.number}\nStatus\n`, 'the number the API gives');
    t.notOk(pdf.includes(first), 'not the internal id');
    // Charged to the card on file when issued: due on issue.
    t.match(pdf, /Issued\n2026-03-01\nDue\n2026-03-01\n/);
    const upcoming = await made(a.tokens.read, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`);
    t.equal(upcoming.number, null, 'a draft has no number yet');
  });

  await t.test('a deployment without SELLER_* prints no seller block', async (t) => {
    const pool = createInvoicePdfPool({ maxThreads: 1 });
    t.teardown(() => pool.destroy());
    const invoice = {
      id: 'inv_plain',
      number: '000007',
      status: 'open' as const,
      currency: 'USD',
      amount: '49.99',
      period_start: '2026-01-01',
      period_end: '2026-01-31',
      created_at: '2026-02-01T01:00:00.000Z',
      due_at: '2026-02-01T01:00:00.000Z',
      paid_at: null,
    };
    const task = { invoice, lines: [], customer: { name: 'Acme' }, address: null };
    const plain = readPdf(Buffer.from(await runPooled(pool, task, 'invoice PDF'))).text;
    t.match(plain, /^INVOICE\nInvoice number\n000007\n/, 'the title, then the invoice facts');
    t.notMatch(plain, /Tax ID|Meterline Ltd/);
  });
});

/** The text of a PDF as a reader sees it, laid out (poppler's pdftotext -layout): one printed row per line. */
function pdfText(pdf: Buffer): string {
  return execFileSync('pdftotext', ['-layout', '-', '-'], { input: pdf }).toString('utf8');
}

/**
 * Invoices a customer reads at a glance (issue 48 item 4), on invoices the real billing run issued: no internal
 * ids (the number, the customer's own reference, product names); a graduated line broken into tier sub-lines that
 * multiply, the flat fee on its own, Σ sub-lines = the line; one discount line per coupon; a threshold invoice
 * labelled with the range it bills.
 */
t.test('invoice PDF: read at a glance', async (t) => {
  const w = await billingWorld(t);
  const ADMIN = w.operator.tokens.admin;
  const tokens = (
    await w.made(ADMIN, 'POST', '/v1/products', {
      name: 'LLM tokens',
      currency: 'USD',
      pricing: 'tiered',
      tiers_mode: 'graduated',
      tiers: [
        { up_to: 100000, unit_price: 0 },
        { up_to: 200000, unit_price: 0.00002, flat_price: 1 },
        { up_to: null, unit_price: 0.000013 },
      ],
    })
  ).id;
  const plan = await w.product('Pro plan', 10, 'USD');
  const loyal = await w.made(ADMIN, 'POST', '/v1/coupons', { name: 'LOYAL25', percent_off: 25, duration: 'forever' });
  const download = async (id: string) => {
    const res = await fetch(`${w.api.url}/v1/billing/invoices/${id}/download`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    t.equal(res.status, 200);
    return Buffer.from(await res.arrayBuffer());
  };
  const customer = async (name: string, reference: string) => {
    const a = await createTestAccount(w.api.infra, { name });
    await w.made(ADMIN, 'PATCH', `/v1/customers/${a.customerId}`, { external_id: reference });
    await w.card(a);
    return { a, meter: await w.meter(a, 'Tokens', 'tokens', 'counter', 'sum') };
  };
  const issued = async (accountToken: string, subId: string) =>
    (await w.made(accountToken, 'GET', '/v1/billing/invoices?per_page=100')).data
      .filter((i: any) => i.subscription_id === subId)
      .sort((x: any, y: any) => x.created_at.localeCompare(y.created_at));
  const octoberShows = (token: string, meter: string, total: number) =>
    waitUntil(
      async () =>
        (await w.made(token, 'GET', `/v1/meters/${meter}/usage?start_date=2026-10-01&end_date=2026-10-31&window=none`))
          .value === total,
      `October at ${total}`,
    );
  const noIds = (t: Test, text: string, ids: string[]) => {
    t.notMatch(text, /\b(prod|mtr|sub|cus|inv|acct|coupon)_[A-Za-z0-9]/, 'no internal id on the PDF');
    for (const id of ids) t.notOk(text.includes(id), `not ${id}`);
  };

  await t.test('a period invoice: tiers that multiply, one LOYAL25 line, no ids', async (t) => {
    const { a, meter } = await customer('Glance Co', 'ACME-0042');
    // On a test clock, so the coupon (redeemed at the clock's time) discounts October.
    const clock = (await w.made(ADMIN, 'POST', '/v1/test_clocks', { frozen_time: '2026-10-01T00:00:00Z' })).id;
    await w.made(ADMIN, 'POST', `/v1/test_clocks/${clock}/customers`, { customer_id: a.customerId });
    const sub = await w.made(ADMIN, 'POST', '/v1/subscriptions', {
      customer_id: a.customerId,
      items: [{ product_id: plan }, { product_id: tokens, meter_id: meter }],
      coupon_id: loyal.id,
    });
    // 250,001 tokens: 100,000 × 0 + 100,000 × 0.00002 + 1.00 flat + 50,001 × 0.000013 = 3.650013 → 3.65.
    await w.usage(a, meter, [{ value: 250001, timestamp: '2026-10-02T00:00:00Z' }]);
    await octoberShows(a.tokens.read, meter, 250001);
    await w.made(ADMIN, 'POST', `/v1/test_clocks/${clock}/advance`, { frozen_time: '2026-11-01T02:00:00Z' });
    const [invoice] = await issued(a.tokens.read, sub.id);
    t.ok(invoice, 'October invoiced');
    const usage = invoice.lines.find((l: any) => l.type === 'usage');
    t.equal(String(usage.amount), '3.65', 'the line as priced');
    t.equal(invoice.lines.filter((l: any) => l.type === 'discount').length, 2, 'stored: one discount line per product');
    const pdf = await download(invoice.id);
    const text = pdfText(pdf);
    const drawn = readPdf(pdf).text; // in drawing order: a label, then its value
    noIds(t, text, [invoice.id, sub.id, a.customerId, meter, tokens, plan, loyal.id]);
    t.match(drawn, `Invoice number\n${invoice.number}\n`, 'the invoice number');
    t.match(text, /Reference ACME-0042/, "the customer's own reference");
    t.match(text, /Glance Co/);
    t.match(text, /Pro plan/);
    t.match(text, /LLM tokens — 250,001 tokens/, 'the product name, then the quantity');
    t.notMatch(text, /graduated:/, 'the breakdown is in the sub-lines, not squeezed into the description');

    // Every sub-line multiplies to the cent, and the sub-lines add up to the line.
    const sub1 = /Tier 1 \(up to 100,000\)\s+100,000\s+0\.00\s+0\.00\n/;
    const sub2 = /Tier 2 \(over 100,000 up to 200,000\)\s+100,000\s+0\.00002\s+2\.00\n/;
    const fee = /Tier 2 flat fee\s+1\s+1\.00\s+1\.00\n/;
    const sub3 = /Tier 3 \(over 200,000\)\s+50,001\s+0\.000013\s+0\.650013\n/;
    const rounding = /Rounding\s+-0\.000013\n/;
    for (const [what, re] of Object.entries({ sub1, sub2, fee, sub3, rounding })) t.match(text, re, what);
    const rows = [...text.matchAll(/^\s*(Tier .*?|Rounding)\s{2,}(?:([\d,.]+)\s+([\d.]+)\s+)?(-?[\d,.]+)$/gm)];
    t.equal(rows.length, 5, 'five sub-lines');
    let sum = new Decimal(0);
    for (const [, label, q, price, amount] of rows) {
      if (q)
        t.ok(new Decimal(q.replaceAll(',', '')).times(price!).eq(amount!.replaceAll(',', '')), `${label}: multiplies`);
      sum = sum.plus(amount!.replaceAll(',', ''));
    }
    t.ok(sum.eq(usage.amount), `Σ sub-lines ${sum} = the line ${usage.amount}`);

    // LOYAL25 discounts both products (two stored lines, for tax): one line on the PDF with their sum.
    const discounts = [...text.matchAll(/Discount LOYAL25 \(25 % off\)\s+1\s+(-[\d.]+)\s+(-[\d.]+)\n/g)];
    t.equal(discounts.length, 1, 'one discount line per coupon');
    const stored = invoice.lines
      .filter((l: any) => l.type === 'discount')
      .reduce((s: Decimal, l: any) => s.plus(String(l.amount)), new Decimal(0));
    t.ok(stored.eq(discounts[0]![2]!), `its amount ${discounts[0]![2]} is the coupon's total ${stored}`);
    t.match(drawn, /Billing period\n2026-10-01 to 2026-10-31\n/);
    execFileSync(
      'pdftoppm',
      ['-png', '-r', '60', '-f', '1', '-l', '1', '-', `${process.env.PDF_PNG ?? '/tmp/invoice-glance'}`],
      {
        input: pdf,
      },
    );
  });

  await t.test('a threshold invoice says so and bills the usage so far, not the whole month', async (t) => {
    const { a, meter } = await customer('Threshold Co', 'TH-7');
    const sub = await w.made(ADMIN, 'POST', '/v1/subscriptions', {
      customer_id: a.customerId,
      items: [{ product_id: tokens, meter_id: meter }],
      billing_threshold: { amount: 5 },
    });
    await w.backdate(sub.id, '2026-10-01T00:00:00Z');
    // 500,000 tokens: 0 + 2.00 + 1.00 + 300,000 × 0.000013 = 3.90 → 6.90 ≥ 5.
    await w.usage(a, meter, [{ value: 500000, timestamp: '2026-10-02T00:00:00Z' }]);
    await octoberShows(a.tokens.read, meter, 500000);
    const run = await w.run('2026-10-05T00:00:00Z');
    t.equal(run.code, 0, run.stderr.slice(-2000));
    const [invoice] = await issued(a.tokens.read, sub.id);
    t.match(invoice, { reason: 'threshold', amount: 6.9 });
    const pdf = await download(invoice.id);
    const text = pdfText(pdf);
    const drawn = readPdf(pdf).text;
    noIds(t, text, [invoice.id, sub.id, a.customerId, meter]);
    t.match(
      drawn,
      'Threshold invoice\nUsage from 2026-10-01 to 2026-10-05\n',
      'labelled as a threshold invoice, with the range it bills: the period start to its issue',
    );
    t.notMatch(drawn, /Billing period/, 'not the whole month as what it bills');
    t.match(drawn, /Within the billing period 2026-10-01 to 2026-10-31/, 'the period it belongs to, said as such');
  });
});
