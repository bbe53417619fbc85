import t from 'tap';
import { luhnValid, normalizeCardNumber } from '../../services/domain/payment-methods/card.js';

t.test("Luhn accepts the networks' published test numbers", async (t) => {
  for (const n of [
    '4242424242424242',
    '4000056655665556',
    '5555555555554444',
    '2223003122003222',
    '378282246310005',
    '6011111111111117',
    '3056930009020004',
    '36227206271667',
    '3566002020360505',
    '6200000000000005',
    '4000000000000002',
    '4000000000009995',
  ]) {
    t.ok(luhnValid(n), n);
  }
});

t.test('Luhn rejects any single-digit change and adjacent transposition', async (t) => {
  const good = '4242424242424242';
  for (let i = 0; i < good.length; i++) {
    const d = Number(good[i]);
    const changed = good.slice(0, i) + String((d + 1) % 10) + good.slice(i + 1);
    t.notOk(luhnValid(changed), `digit ${i} changed`);
  }
  t.notOk(luhnValid('4242424242424241'));
  t.notOk(luhnValid('5555555555554445'));
  // Luhn catches every adjacent transposition except 09 ↔ 90
  const n = '4000056655665556';
  for (let i = 0; i + 1 < n.length; i++) {
    if (n[i] === n[i + 1]) continue;
    t.notOk(luhnValid(n.slice(0, i) + n[i + 1] + n[i] + n.slice(i + 2)), `digits ${i},${i + 1} swapped`);
  }
});

t.test('Luhn refuses non-digits and too-short input', async (t) => {
  t.notOk(luhnValid(''));
  t.notOk(luhnValid('0'));
  t.notOk(luhnValid('4242 4242 4242 4242'));
  t.notOk(luhnValid('42424242424242a2'));
  t.ok(luhnValid('00'), 'all zeros has a zero checksum');
});

t.test('numbers may be grouped by single spaces or dashes', async (t) => {
  t.equal(normalizeCardNumber('4242 4242 4242 4242'), '4242424242424242');
  t.equal(normalizeCardNumber('4242-4242-4242-4242'), '4242424242424242');
  t.equal(normalizeCardNumber(' 3782-822463-10005 '), '378282246310005');
  t.equal(normalizeCardNumber('4242  4242'), null, 'double space');
  t.equal(normalizeCardNumber('4242--4242'), null);
  t.equal(normalizeCardNumber('-4242'), null);
  t.equal(normalizeCardNumber('4242.4242'), null);
  t.equal(normalizeCardNumber('４２４２'), null, 'full-width digits are not digits here');
  t.equal(normalizeCardNumber(''), null);
});
