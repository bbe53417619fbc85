import t from 'tap';
import { CURRENCY_MINOR_UNITS, minorUnits, normalizeCurrency } from '../../shared/money/currencies.js';
import { Decimal, canonicalDecimal, parseAmount, roundToMinorUnit, formatGrouped } from '../../shared/money/decimal.js';
import {
  JsonDecimal,
  JsonNumberLiteral,
  numberLiteralAt,
  parseJsonExact,
  stringifyJson,
} from '../../shared/money/json.js';

t.test('currencies: ISO 4217, any case in, upper case out, minor units', async (t) => {
  t.equal(normalizeCurrency('usd'), 'USD');
  t.equal(normalizeCurrency('eUr'), 'EUR');
  t.equal(normalizeCurrency('XYZ'), null);
  t.equal(normalizeCurrency('US'), null);
  t.equal(normalizeCurrency('XAU'), null, 'no minor unit (gold): not billable');
  t.equal(normalizeCurrency('constructor'), null);
  t.equal(normalizeCurrency('toS'), null);
  t.same(
    [minorUnits('USD'), minorUnits('jpy'), minorUnits('KWD'), minorUnits('CLF'), minorUnits('BHD'), minorUnits('ISK')],
    [2, 0, 3, 4, 3, 0],
  );
  t.throws(() => minorUnits('XYZ'));
  t.ok(Object.keys(CURRENCY_MINOR_UNITS).length > 150);
  t.ok(Object.keys(CURRENCY_MINOR_UNITS).every((c) => /^[A-Z]{3}$/.test(c)));
});

t.test('decimals: canonical text, price checks, rounding half away from zero', async (t) => {
  t.equal(canonicalDecimal('0.10'), '0.1');
  t.equal(canonicalDecimal('-0'), '0');
  t.equal(canonicalDecimal('1e-9'), '0.000000001');
  t.equal(canonicalDecimal('1E+21'), '1000000000000000000000');
  t.equal(new Decimal('0.1').plus('0.2').toString(), '0.3');
  t.same(parseAmount('19.99'), { value: '19.99' });
  t.same(parseAmount('-0'), { value: '0' });
  t.match(parseAmount('-0.01'), { error: /greater than or equal to 0/ });
  t.match(parseAmount('0.0000000001'), { error: /9 decimal/ });
  t.match(parseAmount('1e29'), { error: /less than 10\^29/ });
  t.same(parseAmount('99999999999999999999999999999.999999999'), { value: '99999999999999999999999999999.999999999' });
  t.match(parseAmount('abc'), { error: /decimal/ });
  t.equal(roundToMinorUnit('2.005', 'USD').toFixed(), '2.01');
  t.equal(roundToMinorUnit('-2.005', 'USD').toFixed(), '-2.01');
  t.equal(roundToMinorUnit('2.5', 'JPY').toFixed(), '3');
  t.equal(roundToMinorUnit('1.0005', 'KWD').toFixed(), '1.001');
  t.equal(roundToMinorUnit('1.0004', 'KWD').toFixed(), '1');
});

t.test('JSON: exact decimals out, exact number literals in', async (t) => {
  const body = {
    a: new JsonDecimal('0.30'),
    b: [new JsonDecimal('0.000000001'), 2],
    c: 'text',
    d: { e: new JsonDecimal('12345678901234567890.123456789') },
  };
  const text = stringifyJson(body);
  t.equal(text, '{"a":0.3,"b":[0.000000001,2],"c":"text","d":{"e":12345678901234567890.123456789}}');
  t.same(JSON.parse(text).a, 0.3);
  t.equal(stringifyJson({ s: '~dec0~1~dec0~' }), '{"s":"~dec0~1~dec0~"}', 'look-alike strings stay strings');

  const doc = parseJsonExact(
    '{"price": 0.10, "n": [1e-9, -2, 3.5E+2], "s": "a\\"b}", "t": true, "z": null, "price2": {}}',
  ) as any;
  t.ok(doc.price instanceof JsonNumberLiteral);
  t.equal(doc.price.text, '0.10');
  t.same(
    doc.n.map((x: JsonNumberLiteral) => x.text),
    ['1e-9', '-2', '3.5E+2'],
  );
  t.equal(doc.s, 'a"b}');
  t.equal(doc.t, true);
  t.equal(doc.z, null);
  t.same(doc.price2, {});
  t.equal((parseJsonExact('{"a":1,"a":2}') as any).a.text, '2', 'last duplicate wins, as JSON.parse');
  t.equal(Object.getPrototypeOf(parseJsonExact('{"__proto__":{"x":1}}')), Object.prototype, 'no prototype pollution');
  t.throws(() => parseJsonExact('{"a":1,}'));
  t.throws(() => parseJsonExact('[1 2]'));
  t.equal(numberLiteralAt(Buffer.from('{"price":19.990}'), 'price'), '19.990');
  t.equal(numberLiteralAt(Buffer.from('{"price":"19.99"}'), 'price'), undefined);
  t.equal(
    numberLiteralAt(Buffer.from('{"price":' + '9'.repeat(2000) + '}'), 'price'),
    '9'.repeat(2000),
    'long literals are read whole',
  );
});

t.test('formatGrouped: thousands separators, every digit kept, at least the given decimals', async (t) => {
  const cases: [string, number, string][] = [
    ['0', 0, '0'],
    ['0', 2, '0.00'],
    ['-0', 2, '0.00'],
    ['7', 0, '7'],
    ['999', 2, '999.00'],
    ['1000', 0, '1,000'],
    ['-1234567.5', 2, '-1,234,567.50'],
    ['1234567.123456789', 2, '1,234,567.123456789'],
    ['100000', 0, '100,000'],
    ['12345678901234567890123456789', 0, '12,345,678,901,234,567,890,123,456,789'],
  ];
  for (const [value, min, text] of cases) t.equal(formatGrouped(value, min), text, `${value} with ${min} decimals`);
  t.equal(formatGrouped(new Decimal('1e6')), '1,000,000', 'a Decimal in plain notation');
});
