import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { callJson } from '../fixtures/matrix.js';
import { customerToken } from '../fixtures/operator.js';
import { readPdf } from '../fixtures/pdf.js';
import { Decimal } from '../../shared/money/decimal.js';

/**
 * Tax, legal details and terms (issue 31, docs/billing.md "Tax"): the deployment's tax rates (admin), a customer's
 * legal name, address, tax ids, exemption and net terms, and invoices taxed per line and per rate, rounded per
 * line to the currency's minor unit — worked examples to the cent, through the real api, `meterline billing run`
 * and Postgres. Every invoice bills October 2026 (the run of 2026-11-01); no customer has a card, so each invoice
 * due at once stays open after its failed first attempt.
 */
t.test('tax: rates, legal details, taxed invoices, credit notes, due dates', async (t) => {
  const w = await billingWorld(t);
  const ADMIN = w.operator.tokens.admin;
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(w.api.url, token, method, path, body);
  const rate = async (body: Record<string, unknown>) => (await w.made(ADMIN, 'POST', '/v1/tax_rates', body)).id;
  const product = async (name: string, price: string, currency: string, taxRateIds: string[] = []) =>
    (
      await w.made(ADMIN, 'POST', '/v1/products', {
        name,
        price: Number(price),
        currency,
        ...(taxRateIds.length ? { tax_rate_ids: taxRateIds } : {}),
      })
    ).id as string;
  let n = 0;
  const customer = async (legal: Record<string, unknown>) =>
    (await w.made(ADMIN, 'POST', '/v1/customers', { name: `Taxed ${n}`, external_id: `taxed-${n++}`, ...legal })) as {
      id: string;
      account_id: string;
    };
  /** The customer's October 2026 invoice of a subscription to these products. */
  const octoberInvoice = async (customerId: string, products: string[]) => {
    const sub = await w.made(ADMIN, 'POST', '/v1/subscriptions', {
      customer_id: customerId,
      items: products.map((product_id) => ({ product_id })),
    });
    await w.backdate(sub.id, '2026-10-05T00:00:00Z');
    const run = await w.run('2026-11-01T01:00:00Z');
    t.equal(run.code, 0, run.stderr.slice(-2000));
    const list = await w.made(ADMIN, 'GET', `/v1/billing/invoices?customer_id=${customerId}&per_page=100`);
    return list.data.find((i: { subscription_id: string }) => i.subscription_id === sub.id);
  };
  /** An invoice as the operator reads it now (the customer's list, ?customer_id=). */
  const invoiceOf = async (customerId: string, id: string) =>
    (await w.made(ADMIN, 'GET', `/v1/billing/invoices?customer_id=${customerId}&per_page=100`)).data.find(
      (i: { id: string }) => i.id === id,
    );
  /** amount = Σ lines exactly, whatever the invoice. */
  const sumOfLines = (inv: { lines: { amount: number }[] }) =>
    inv.lines.reduce((s, l) => s.plus(String(l.amount)), new Decimal(0)).toNumber();
  const pdfOf = async (accountId: string, invoiceId: string) => {
    const token = await customerToken(w.api.infra, accountId, ['read']);
    const res = await fetch(`${w.api.url}/v1/billing/invoices/${invoiceId}/download`, {
      headers: { authorization: `Bearer ${token}` },
    });
    t.equal(res.status, 200);
    return readPdf(Buffer.from(await res.arrayBuffer())).text;
  };

  const vatFR = await rate({ name: 'TVA', percentage: 20, country: 'fr', inclusive: false });
  const mwstDE = await rate({ name: 'MwSt', percentage: 19, country: 'DE', inclusive: true });
  const gst = await rate({ name: 'GST', percentage: 5, inclusive: false });
  const pst = await rate({ name: 'PST', percentage: 7, country: 'CA', region: 'BC', inclusive: false });
  const ctJP = await rate({ name: 'JCT', percentage: 10, country: 'JP', inclusive: false });
  const vatKW = await rate({ name: 'VAT', percentage: 5, country: 'KW', inclusive: false });
  const address = (country: string, region?: string) => ({
    line1: '1 Rue de la Paix',
    city: 'Paris',
    postal_code: '75002',
    country,
    ...(region ? { region } : {}),
  });

  await t.test('tax rates: admin only, validated field by field, archived ones tax nothing', async (t) => {
    const got = await call(ADMIN, 'GET', `/v1/tax_rates/${vatFR}`);
    t.match(got.body, { id: vatFR, name: 'TVA', percentage: 20, country: 'FR', region: null, inclusive: false });
    t.equal(got.body.archived, false);
    const cust = await customer({});
    for (const scopes of [['read', 'write'], ['read']] as const) {
      const token = await customerToken(w.api.infra, cust.account_id, [...scopes]);
      const made = await call(token, 'POST', '/v1/tax_rates', { name: 'Mine', percentage: 0, inclusive: false });
      t.equal(made.status, 403, `a customer (${scopes.join(',')}) cannot create a rate`);
      t.equal((await call(token, 'GET', '/v1/tax_rates')).status, 403, 'nor list the deployment’s rates');
      t.equal((await call(token, 'GET', `/v1/tax_rates/${vatFR}`)).status, 403, 'nor read one');
      const own = await call(token, 'PATCH', `/v1/customers/${cust.id}`, { tax_exempt: 'exempt' });
      t.equal(own.status, 403, 'nor exempt itself');
    }
    for (const [body, field, message] of [
      [{ name: 'x', percentage: 100.5, inclusive: false }, 'percentage', undefined],
      [{ name: 'x', percentage: 7.12345, inclusive: false }, 'percentage', 'must have at most 4 decimal places'],
      [{ name: 'x', percentage: 5, country: 'XX', inclusive: false }, 'country', undefined],
      [{ name: 'x', percentage: 5, region: 'BC', inclusive: false }, 'region', 'requires country'],
      [{ name: '  ', percentage: 5, inclusive: false }, 'name', 'must be printable and not blank'],
      [{ name: 'x', percentage: 5 }, 'inclusive', undefined],
    ] as [Record<string, unknown>, string, string | undefined][]) {
      const r = await call(ADMIN, 'POST', '/v1/tax_rates', body);
      t.equal(r.status, 422, JSON.stringify(body));
      t.equal(r.body.code, 'validation_failed');
      t.same(
        r.body.errors.map((e: { field: string }) => e.field),
        [field],
        JSON.stringify(r.body.errors),
      );
      if (message) t.equal(r.body.errors[0].message, message);
    }
    const unknown = await call(ADMIN, 'POST', '/v1/products', {
      name: 'x',
      price: 1,
      currency: 'EUR',
      tax_rate_ids: [vatFR, 'txr_nosuchrate0000000000000'],
    });
    t.equal(unknown.status, 422);
    t.same(unknown.body.errors, [{ field: 'tax_rate_ids[1]', message: 'no such active tax rate' }]);
    // An archived rate: no longer listed by default, no longer nameable, no longer a country's default.
    const old = await rate({ name: 'Old VAT', percentage: 21, country: 'NL', inclusive: false });
    const archived = await call(ADMIN, 'POST', `/v1/tax_rates/${old}/archive`);
    t.equal(archived.body.archived, true);
    const active = await w.made(ADMIN, 'GET', '/v1/tax_rates?per_page=100');
    t.notOk(
      active.data.some((r: { id: string }) => r.id === old),
      'not among the active rates',
    );
    const all = await w.made(ADMIN, 'GET', '/v1/tax_rates?archived=true');
    t.same(
      all.data.map((r: { id: string }) => r.id),
      [old],
    );
    t.equal(
      (await call(ADMIN, 'POST', '/v1/products', { name: 'x', price: 1, currency: 'EUR', tax_rate_ids: [old] })).status,
      422,
    );
    const nl = await customer({ address: address('NL') });
    const inv = await octoberInvoice(nl.id, [await product('Dutch plan', '10', 'EUR')]);
    t.match(inv, { subtotal: 10, tax: 0, amount: 10 });
    t.equal(inv.lines.length, 1, 'no tax line at an archived rate');
  });

  await t.test('customers carry legal details; bad ones are refused field by field', async (t) => {
    const made = await call(ADMIN, 'POST', '/v1/customers', {
      name: 'Acme',
      external_id: 'acme-legal',
      legal_name: 'Acme Widgets SAS',
      address: { ...address('fr'), line2: 'Bâtiment B' },
      tax_ids: [{ type: 'eu_vat', value: 'FR40303265045' }],
      tax_exempt: 'reverse',
      net_terms_days: 14,
    });
    t.equal(made.status, 201, JSON.stringify(made.body));
    t.match(made.body, {
      legal_name: 'Acme Widgets SAS',
      address: { line1: '1 Rue de la Paix', line2: 'Bâtiment B', city: 'Paris', postal_code: '75002', country: 'FR' },
      tax_ids: [{ type: 'eu_vat', value: 'FR40303265045' }],
      tax_exempt: 'reverse',
      net_terms_days: 14,
    });
    const patched = await call(ADMIN, 'PATCH', `/v1/customers/${made.body.id}`, {
      legal_name: null,
      tax_exempt: 'none',
    });
    t.match(patched.body, { legal_name: null, tax_exempt: 'none', net_terms_days: 14, address: { country: 'FR' } });
    const plain = await customer({});
    t.match(
      (await call(ADMIN, 'GET', `/v1/customers/${plain.id}`)).body,
      { legal_name: null, address: null, tax_ids: [], tax_exempt: 'none', net_terms_days: 0 },
      'defaults',
    );
    for (const [body, field] of [
      [{ address: address('XX') }, 'address.country'],
      [{ address: { line1: 'x', city: 'y', country: 'FR' } }, 'address.postal_code'],
      [{ net_terms_days: -1 }, 'net_terms_days'],
      [{ net_terms_days: 1.5 }, 'net_terms_days'],
      [{ tax_exempt: 'sometimes' }, 'tax_exempt'],
      [{ tax_ids: [{ type: 'EU VAT', value: 'x' }] }, 'tax_ids[0].type'],
      [{ tax_ids: [{ type: 'eu_vat', value: ' ' }] }, 'tax_ids[0].value'],
    ] as [Record<string, unknown>, string][]) {
      const r = await call(ADMIN, 'PATCH', `/v1/customers/${plain.id}`, body);
      t.equal(r.status, 422, JSON.stringify(body));
      t.ok(
        r.body.errors.some((e: { field: string }) => e.field === field),
        `${field}: ${JSON.stringify(r.body.errors)}`,
      );
    }
  });

  let exclusive: any;
  let exclusiveCustomer: { id: string; account_id: string };
  await t.test('exclusive 20 % (the country’s default): tax rounded per line, added', async (t) => {
    exclusiveCustomer = await customer({ address: address('FR') });
    // 10.33 × 20 % = 2.066 → 2.07 per line: 4.14, where 20.66 × 20 % rounded once would be 4.13.
    exclusive = await octoberInvoice(exclusiveCustomer.id, [
      await product('Plan', '10.33', 'EUR'),
      await product('Support', '10.33', 'EUR'),
    ]);
    t.match(exclusive, { currency: 'EUR', subtotal: 20.66, tax: 4.14, amount: 24.8, amount_due: 24.8 });
    t.match(exclusive.lines, [
      { type: 'flat', amount: 10.33 },
      { type: 'flat', amount: 10.33 },
      { type: 'tax', tax_rate_id: vatFR, description: 'TVA 20 % on 20.66', amount: 4.14, tax_amount: 4.14 },
    ]);
    t.equal(exclusive.lines.length, 3);
    t.equal(exclusive.lines[2].description, 'TVA 20 % on 20.66', 'the tax line names its rate and base');
    t.equal(sumOfLines(exclusive), exclusive.amount, 'amount = Σ lines');
    t.equal(exclusive.due_date, '2026-11-01', 'net_terms_days 0: due on issue');
    const charged = await w.api.infra.pg.query(
      `SELECT count(*)::int AS n FROM payment_attempts WHERE invoice_id = $1`,
      [exclusive.id],
    );
    t.equal(charged.rows[0].n, 1, 'due at once: the first attempt ran with the close');
    const own = await customerToken(w.api.infra, exclusiveCustomer.account_id, ['read']);
    const upcoming = await call(
      own,
      'GET',
      `/v1/billing/invoices/upcoming?subscription_id=${exclusive.subscription_id}`,
    );
    t.match(
      upcoming.body,
      { status: 'draft', subtotal: 20.66, tax: 4.14, amount: 24.8 },
      'the upcoming invoice is taxed alike',
    );
  });

  await t.test('a credit note on a taxed invoice reverses the tax per line, exactly', async (t) => {
    const credit = (body: unknown) => call(ADMIN, 'POST', `/v1/billing/invoices/${exclusive.id}/credit-notes`, body);
    // 5 of line 0's 10.33: round(2.07 × 5 / 10.33) = round(1.0019…) = 1.00 of its tax.
    const first = await credit({ lines: [{ line: 0, amount: 5 }], reason: 'Outage' });
    t.equal(first.status, 201, JSON.stringify(first.body));
    t.match(first.body, { amount: 6, tax: 1 });
    t.same(
      first.body.lines.map((l: Record<string, unknown>) => [l.invoice_line, l.tax_of_line, l.amount]),
      [
        [0, undefined, 5],
        [2, 0, 1],
      ],
    );
    // The rest of line 0: its tax in full, 2.07 − 1.00 = 1.07 — never a cent more than was taxed.
    const rest = await credit({ lines: [{ line: 0, amount: 5.33 }], reason: 'Outage' });
    t.match(rest.body, { amount: 6.4, tax: 1.07 });
    const direct = await credit({ lines: [{ line: 2, amount: 0.01 }], reason: 'x' });
    t.equal(direct.status, 422);
    t.same(direct.body.errors, [
      { field: 'lines[0].line', message: 'line 2 is a tax line: tax is credited with the lines it taxes' },
    ]);
    const inv = await invoiceOf(exclusiveCustomer.id, exclusive.id);
    t.match(inv, { amount: 24.8, amount_credited: 12.4, amount_due: 12.4 }, 'line 0 with its tax: 10.33 + 2.07');
  });

  await t.test('inclusive 19 %: extracted from the line amounts, inside the total', async (t) => {
    const c = await customer({ address: address('DE') });
    // 119.00 × 19 / 119 = 19.00; 10.00 × 19 / 119 = 1.596… → 1.60.
    const inv = await octoberInvoice(c.id, [
      await product('Pro', '119', 'EUR', [mwstDE]),
      await product('Extra', '10', 'EUR'),
    ]);
    t.match(inv, { subtotal: 129, tax: 20.6, amount: 129 });
    t.match(inv.lines[2], {
      type: 'tax',
      tax_rate_id: mwstDE,
      description: 'MwSt 19 % (included) on 129.00',
      amount: 0,
      tax_amount: 20.6,
    });
    t.equal(sumOfLines(inv), inv.amount, 'amount = Σ lines: the included tax adds nothing');
    t.equal(inv.lines[2].description, 'MwSt 19 % (included) on 129.00');
    const text = await pdfOf(c.account_id, inv.id);
    for (const s of ['Subtotal', 'Tax included', '20.60', '129.00']) t.ok(text.includes(s), `PDF shows ${s}`);
  });

  await t.test('two rates on one invoice (GST everywhere, PST in BC), one tax line each', async (t) => {
    const c = await customer({ address: { ...address('CA'), region: 'BC' } });
    const inv = await octoberInvoice(c.id, [
      await product('Hosting', '100', 'CAD', [gst, pst]),
      await product('Backup', '9.99', 'CAD', [gst]),
    ]);
    // GST 5.00 + 0.4995 → 0.50 = 5.50; PST 7.00 on the hosting only.
    t.match(inv, { currency: 'CAD', subtotal: 109.99, tax: 12.5, amount: 122.49 });
    t.match(inv.lines.slice(2), [
      { type: 'tax', tax_rate_id: gst, description: 'GST 5 % on 109.99', amount: 5.5 },
      { type: 'tax', tax_rate_id: pst, description: 'PST 7 % on 100.00', amount: 7 },
    ]);
    t.same(
      inv.lines.slice(2).map((l: { description: string }) => l.description),
      ['GST 5 % on 109.99', 'PST 7 % on 100.00'],
    );
    t.equal(sumOfLines(inv), inv.amount);
  });

  await t.test('JPY (0 decimals) and KWD (3 decimals): tax rounded to the minor unit', async (t) => {
    const jp = await customer({ address: address('JP') });
    // 1234 × 10 % = 123.4 → 123; 555 × 10 % = 55.5 → 56 (half away from zero).
    const yen = await octoberInvoice(jp.id, [
      await product('Plan', '1234', 'JPY'),
      await product('Seat', '555', 'JPY'),
    ]);
    t.match(yen, { currency: 'JPY', subtotal: 1789, tax: 179, amount: 1968 });
    t.match(yen.lines[2], { tax_rate_id: ctJP, amount: 179 });
    const kw = await customer({ address: address('KW') });
    // 1.234 × 5 % = 0.0617 → 0.062; 2.345 × 5 % = 0.11725 → 0.117.
    const dinar = await octoberInvoice(kw.id, [
      await product('Plan', '1.234', 'KWD'),
      await product('Seat', '2.345', 'KWD'),
    ]);
    t.match(dinar, { currency: 'KWD', subtotal: 3.579, tax: 0.179, amount: 3.758 });
    t.match(dinar.lines[2], { tax_rate_id: vatKW, amount: 0.179 });
  });

  await t.test('reverse charge and exempt: no tax; reverse charge prints the legal note', async (t) => {
    const legal = {
      legal_name: 'Acme Widgets SAS',
      address: address('FR'),
      tax_ids: [{ type: 'eu_vat', value: 'FR40303265045' }],
    };
    const reverse = await customer({ ...legal, tax_exempt: 'reverse' });
    const exempt = await customer({ address: address('FR'), tax_exempt: 'exempt' });
    const plan = await product('Plan FR', '100', 'EUR', [vatFR]);
    for (const [c, kind] of [
      [reverse, 'reverse'],
      [exempt, 'exempt'],
    ] as const) {
      const inv = await octoberInvoice(c.id, [plan]);
      t.match(inv, { subtotal: 100, tax: 0, amount: 100, tax_exempt: kind }, kind);
      t.same(
        inv.lines.map((l: { type: string }) => l.type),
        ['flat'],
        `${kind}: no tax line, though the product names a rate`,
      );
      const text = await pdfOf(c.account_id, inv.id);
      t.equal(
        text.includes('Reverse charge: VAT to be accounted for by the recipient'),
        kind === 'reverse',
        `${kind}: the reverse-charge note ${kind === 'reverse' ? 'is' : 'is not'} printed`,
      );
      if (kind === 'reverse')
        for (const s of ['Acme Widgets SAS', '1 Rue de la Paix', '75002 Paris', 'FR', 'Tax ID FR40303265045 (eu_vat)'])
          t.ok(text.includes(s), `the PDF shows ${s}`);
    }
  });

  await t.test('net_terms_days → due_date; the first attempt and dunning count from it', async (t) => {
    const c = await customer({ address: address('FR'), net_terms_days: 30 });
    const inv = await octoberInvoice(c.id, [await product('Termed', '10', 'EUR')]);
    t.match(inv, {
      status: 'open',
      amount: 12,
      due_date: '2026-12-01',
      attempt_count: 0,
      next_payment_attempt_at: '2026-12-01T01:00:00.000Z',
    });
    const text = await pdfOf(c.account_id, inv.id);
    for (const s of ['Due', '2026-12-01', 'Subtotal', 'Tax', '2.00', '12.00', 'TVA 20 % on 10.00'])
      t.ok(text.includes(s), `the PDF shows ${s}`);
    // On the due date the attempt runs (no card: it fails), and the retry is due + 1 day.
    const run = await w.run('2026-12-01T01:00:01Z');
    t.equal(run.code, 0, run.stderr.slice(-2000));
    const after = await invoiceOf(c.id, inv.id);
    t.match(after, { status: 'open', attempt_count: 1, next_payment_attempt_at: '2026-12-02T01:00:00.000Z' });
  });
});
