import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { insertInvoice } from '../fixtures/invoices.js';
import { readPdf } from '../fixtures/pdf.js';
import { createInvoicePdfPool, runPooled } from '../../services/workers/pool.js';

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
    t.match(pdf, `Invoice number\n${one.number}\nInvoice\n${first}\n`, 'the number the API gives, above the id');
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
      customer_id: a.customerId,
      subscription_id: sub.id,
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
