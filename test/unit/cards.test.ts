import t from 'tap';
import { cardBrand, checkCard } from '../../services/domain/payment-methods/card.js';

t.test('brand from the leading digits', async (t) => {
  const cases: [string, string][] = [
    ['4242424242424242', 'visa'],
    ['4000056655665556', 'visa'],
    ['5555555555554444', 'mastercard'],
    ['5105105105105100', 'mastercard'],
    ['2223003122003222', 'mastercard'],
    ['2720990000000007', 'mastercard'],
    ['378282246310005', 'amex'],
    ['371449635398431', 'amex'],
    ['6011111111111117', 'discover'],
    ['6445644564456445', 'discover'],
    ['6500000000000002', 'discover'],
    ['6221260000000000', 'discover'],
    ['3056930009020004', 'diners'],
    ['36227206271667', 'diners'],
    ['3095000000000000', 'diners'],
    ['3566002020360505', 'jcb'],
    ['3528000000000000', 'jcb'],
    ['6200000000000005', 'unionpay'],
    ['6229260000000000', 'unionpay'],
    ['8171999927660000', 'unionpay'],
    ['2221000000000009', 'mastercard'],
    ['2220990000000000', 'unknown'],
    ['9999999999999995', 'unknown'],
    ['1234567812345670', 'unknown'],
  ];
  for (const [n, brand] of cases) t.equal(cardBrand(n), brand, n);
});

const NOW = new Date('2026-06-15T12:00:00.000Z');
const valid = { number: '4242 4242 4242 4242', exp_month: 6, exp_year: 2026, cvc: '123' };

t.test('a valid card comes back normalised with brand and last4', async (t) => {
  const r = checkCard(valid, NOW);
  t.same(r.errors, []);
  t.same(r.card, {
    number: '4242424242424242',
    exp_month: 6,
    exp_year: 2026,
    cvc: '123',
    brand: 'visa',
    last4: '4242',
  });
});

t.test('expiry: the current month is still valid; earlier ones are not (UTC)', async (t) => {
  t.same(checkCard({ ...valid, exp_month: 6, exp_year: 2026 }, NOW).errors, []);
  t.same(checkCard({ ...valid, exp_month: 5, exp_year: 2026 }, NOW).errors, [
    { field: 'card.exp_month', message: 'the card has expired' },
  ]);
  t.same(checkCard({ ...valid, exp_month: 12, exp_year: 2025 }, NOW).errors, [
    { field: 'card.exp_year', message: 'the card has expired' },
  ]);
  t.same(checkCard({ ...valid, exp_month: 1, exp_year: 2027 }, NOW).errors, []);
  // 23:30 on 31 May in New York is already June in UTC: a card expiring in May is expired
  t.same(
    checkCard({ ...valid, exp_month: 5, exp_year: 2026 }, new Date('2026-06-01T03:30:00Z')).errors[0]?.field,
    'card.exp_month',
  );
  t.same(checkCard({ ...valid, exp_month: 5, exp_year: 2026 }, new Date('2026-05-31T23:59:59.999Z')).errors, []);
});

t.test('expiry: month 1–12, year not absurd', async (t) => {
  t.same(checkCard({ ...valid, exp_month: 0 }, NOW).errors, [
    { field: 'card.exp_month', message: 'must be a month number from 1 to 12' },
  ]);
  t.same(checkCard({ ...valid, exp_month: 13, exp_year: 2030 }, NOW).errors, [
    { field: 'card.exp_month', message: 'must be a month number from 1 to 12' },
  ]);
  t.equal(
    checkCard({ ...valid, exp_year: 26 }, NOW).errors[0]?.field,
    'card.exp_year',
    'two-digit year is in the past',
  );
  t.equal(checkCard({ ...valid, exp_year: 2077 }, NOW).errors[0]?.field, 'card.exp_year');
  t.same(checkCard({ ...valid, exp_year: 2076 }, NOW).errors, []);
});

t.test('number: digits only, 12–19 of them, Luhn', async (t) => {
  const err = (number: string) => checkCard({ ...valid, number }, NOW).errors;
  t.same(err('4242424242424241'), [
    { field: 'card.number', message: 'is not a valid card number (checksum mismatch)' },
  ]);
  t.same(err('42424242421'), [{ field: 'card.number', message: 'must have 12–19 digits' }], '11 digits');
  t.same(err('42424242424242424242'), [{ field: 'card.number', message: 'must have 12–19 digits' }], '20 digits');
  t.same(err('4242x4242424242424'), [
    { field: 'card.number', message: 'must contain only digits, optionally grouped by spaces or dashes' },
  ]);
  t.same(err('000000000000'), [], '12 digits passing Luhn');
  t.same(err('4000-0000-0000-0000-006'), [], '19 digits with dashes');
});

t.test('cvc: 3 or 4 digits, exactly 4 for amex', async (t) => {
  const err = (number: string, cvc: string) => checkCard({ ...valid, number, cvc }, NOW).errors;
  t.same(err('4242424242424242', '1234'), []);
  t.same(err('4242424242424242', '12'), [{ field: 'card.cvc', message: 'must be 3 or 4 digits' }]);
  t.same(err('4242424242424242', '12345'), [{ field: 'card.cvc', message: 'must be 3 or 4 digits' }]);
  t.same(err('4242424242424242', '12a'), [{ field: 'card.cvc', message: 'must be 3 or 4 digits' }]);
  t.same(err('378282246310005', '1234'), []);
  t.same(err('378282246310005', '123'), [
    { field: 'card.cvc', message: 'must be 4 digits for American Express cards' },
  ]);
});

t.test('every problem is reported at once, and no message repeats the number or cvc', async (t) => {
  const r = checkCard({ number: '4242424242424241', exp_month: 13, exp_year: 2020, cvc: '98765' }, NOW);
  t.same(r.errors.map((e) => e.field).sort(), ['card.cvc', 'card.exp_month', 'card.exp_year', 'card.number']);
  t.notOk(JSON.stringify(r.errors).includes('4242'));
  t.notOk(JSON.stringify(r.errors).includes('98765'));
  t.equal(r.card, undefined);
});

t.test('fields of the wrong type are left to the schema', async (t) => {
  t.same(checkCard({ number: 4242424242424242, exp_month: '6', exp_year: null, cvc: 123 }, NOW), { errors: [] });
});
