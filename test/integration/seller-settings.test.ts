import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { insertInvoice } from '../fixtures/invoices.js';
import { readPdf } from '../fixtures/pdf.js';
import { LOGO_MAX_BYTES } from '../../services/domain/seller/logo.js';
import { sellerProfile } from '../../services/domain/seller/profile.js';

/** A 1×1 PNG and a 1×1 JPEG, as a browser's FileReader.readAsDataURL gives them. */
export const PNG_LOGO =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const JPEG_1X1 =
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=';

/**
 * Issue 48 item 3: the seller and branding (legal name, address, tax ids, logo, support email, invoice footer, the
 * emails' From) set through `PATCH /v1/seller_settings` and printed on the invoice PDF; SELLER_* stay the defaults
 * of what the operator has not set. Emails are invoice-emails.test.ts's.
 */
t.test('seller settings: set over the API, printed on the PDF, SELLER_* as defaults', async (t) => {
  const config = await isolatedConfig(t, {
    SELLER_NAME: 'Env Seller Ltd',
    SELLER_ADDRESS: '9 Env Road\\nEnvtown',
    INVOICE_FOOTER: 'Env footer',
    MAIL_FROM: 'Env Billing <env@billing.example>',
  });
  const api = await startApi(t, config);
  const operator = await createTestAccount(api.infra, { operator: true });
  const customer = await createTestAccount(api.infra, { name: 'Globex Corp' });
  const admin = (method: string, path: string, body?: unknown) =>
    callJson(api.url, operator.tokens.admin, method, path, body);

  const plan = (await admin('POST', '/v1/products', { name: 'Pro plan', price: 49.99, currency: 'USD' })).body;
  const sub = (
    await callJson(api.url, customer.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan.id }] })
  ).body;
  const invoiceId = await insertInvoice(api.infra.pg, {
    accountId: customer.accountId,
    customerId: customer.customerId,
    subscriptionId: sub.id,
    amount: '49.99',
    periodStart: '2026-01-01',
    periodEnd: '2026-01-31',
    lines: [{ product_id: plan.id, description: 'Pro plan', quantity: '1', unit_price: '49.99', amount: '49.99' }],
  });
  const pdf = async () => {
    const res = await fetch(`${api.url}/v1/billing/invoices/${invoiceId}/download`, {
      headers: { authorization: `Bearer ${operator.tokens.admin}` },
    });
    t.equal(res.status, 200, 'the operator downloads the customer’s invoice');
    const bytes = Buffer.from(await res.arrayBuffer());
    return { ...readPdf(bytes), images: bytes.toString('latin1').split('/Subtype /Image').length - 1 };
  };

  await t.test('nothing set: every field null, the environment prints', async (t) => {
    const r = await admin('GET', '/v1/seller_settings');
    t.equal(r.status, 200);
    t.same(r.body, {
      legal_name: null,
      address: null,
      tax_ids: [],
      support_email: null,
      invoice_footer: null,
      email_from: null,
      logo: null,
      updated_at: null,
    });
    const doc = await pdf();
    t.match(doc.text, /^INVOICE\nEnv Seller Ltd\n9 Env Road\nEnvtown\n/);
    t.ok(doc.text.includes('Env footer'));
    t.equal(doc.images, 0, 'no logo');
  });

  const settings = {
    legal_name: 'Initech Billing GmbH',
    address: { line1: 'Hauptstraße 1', city: 'Berlin', postal_code: '10115', country: 'de' },
    tax_ids: [{ type: 'eu_vat', value: 'DE123456789' }],
    support_email: 'help@initech.example',
    invoice_footer: 'Bank: DE89 3704 0044 0532 0130 00',
    email_from: 'invoices@initech.example',
    logo: PNG_LOGO,
  };

  await t.test('set: the API shows what was set; the PDF prints it', async (t) => {
    const r = await admin('PATCH', '/v1/seller_settings', settings);
    t.equal(r.status, 200, JSON.stringify(r.body));
    const expected = { ...settings, address: { ...settings.address, country: 'DE' } };
    t.match(r.body, expected);
    t.ok(Date.parse(r.body.updated_at) > 0);
    t.same((await admin('GET', '/v1/seller_settings')).body, r.body, 'GET shows the same');
    const doc = await pdf();
    t.match(
      doc.text,
      /^INVOICE\nInitech Billing GmbH\nHauptstra.e 1\n10115 Berlin\nDE\nTax ID DE123456789 \(eu_vat\)\nQuestions: help@initech\.example\n/,
      'the seller block under the title',
    );
    t.ok(doc.text.includes(settings.invoice_footer), 'the footer');
    t.notOk(doc.text.includes('Env Seller Ltd'), 'the settings replace the environment');
    t.ok(doc.images >= 1, 'the logo is drawn (a PNG with alpha adds its mask)');
    const profile = await sellerProfile(api.infra, customer.accountId);
    t.same(
      profile.from,
      { name: 'Initech Billing GmbH', address: 'invoices@initech.example' },
      'emails come from the seller',
    );
  });

  await t.test('a JPEG logo; null clears a field back to its default, the rest stay', async (t) => {
    const r = await admin('PATCH', '/v1/seller_settings', {
      legal_name: null,
      email_from: null,
      logo: `data:image/jpeg;base64,${JPEG_1X1}`,
    });
    t.equal(r.status, 200, JSON.stringify(r.body));
    t.equal(r.body.legal_name, null);
    t.equal(r.body.logo, `data:image/jpeg;base64,${JPEG_1X1}`);
    t.equal(r.body.support_email, settings.support_email, 'not named: unchanged');
    const doc = await pdf();
    t.match(doc.text, /^INVOICE\nEnv Seller Ltd\nHauptstra.e 1\n/, 'SELLER_NAME again, the address kept');
    t.equal(doc.images, 1);
    const profile = await sellerProfile(api.infra, customer.accountId);
    t.same(profile.from, { name: 'Env Billing', address: 'env@billing.example' }, 'MAIL_FROM again');
    t.equal((await admin('PATCH', '/v1/seller_settings', { logo: null })).body.logo, null, 'the logo removed');
    t.equal((await pdf()).images, 0);
  });

  await t.test('bad input: 422 naming each field, nothing written', async (t) => {
    const before = (await admin('GET', '/v1/seller_settings')).body;
    const pngBytes = Buffer.from(PNG_LOGO.split(',')[1]!, 'base64');
    const tooBig = Buffer.concat([pngBytes, Buffer.alloc(LOGO_MAX_BYTES)]);
    const cases: [string, Record<string, unknown>, string, RegExp][] = [
      ['a GIF', { logo: 'data:image/gif;base64,R0lGODlhAQABAAAAACw=' }, 'logo', /PNG or JPEG/],
      ['a remote URL', { logo: 'https://example.com/logo.png' }, 'logo', /data: URL/],
      [
        'PNG bytes called a JPEG',
        { logo: `data:image/jpeg;base64,${pngBytes.toString('base64')}` },
        'logo',
        /not a valid JPEG/,
      ],
      [
        'text called a PNG',
        { logo: `data:image/png;base64,${Buffer.from('hello world').toString('base64')}` },
        'logo',
        /not a valid PNG/,
      ],
      [
        'a logo over 256 KiB',
        { logo: `data:image/png;base64,${tooBig.toString('base64')}` },
        'logo',
        /at most 350000|at most 262144 bytes/,
      ],
      ['an email that is none', { email_from: 'billing' }, 'email_from', /email/],
      ['a blank legal name', { legal_name: '   ' }, 'legal_name', /blank/],
      [
        'a country that is none',
        { address: { line1: 'x', city: 'y', postal_code: '1', country: 'XX' } },
        'address.country',
        /ISO 3166/,
      ],
      ['a footer of two lines', { invoice_footer: 'a\nb' }, 'invoice_footer', /printable/],
      ['an unknown field', { colour: 'red' }, 'colour', /./],
    ];
    for (const [what, body, field, message] of cases) {
      const r = await admin('PATCH', '/v1/seller_settings', { support_email: 'changed@x.example', ...body });
      t.equal(r.status, 422, what);
      t.equal(r.body.code, 'validation_failed', what);
      const named = (r.body.errors ?? []).find((e: { field: string }) => e.field === field);
      t.ok(named, `${what}: names ${field} (${JSON.stringify(r.body.errors)})`);
      if (named) t.match(named.message, message, what);
    }
    t.equal((await admin('PATCH', '/v1/seller_settings', {})).status, 422, 'an empty change');
    t.same((await admin('GET', '/v1/seller_settings')).body, before, 'nothing changed');
  });

  await t.test('a customer’s token: 403, whatever its scope', async (t) => {
    for (const token of [customer.tokens.read, customer.tokens.write, customer.tokens.admin]) {
      t.equal((await callJson(api.url, token, 'GET', '/v1/seller_settings')).status, 403);
      const r = await callJson(api.url, token, 'PATCH', '/v1/seller_settings', { legal_name: 'Mallory' });
      t.equal(r.status, 403);
      t.equal(r.body.code, 'insufficient_scope');
    }
  });
});
