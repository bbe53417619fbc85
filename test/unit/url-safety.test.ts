import t from 'tap';
import { isPublicAddress, webhookUrlProblem } from '../../services/domain/webhooks/url-safety.js';

t.test('public and non-public addresses', async (t) => {
  for (const ip of [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
  ]) {
    t.ok(isPublicAddress(ip), `${ip} is public`);
  }
  for (const ip of [
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '192.0.2.1',
    '198.18.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '2001:db8::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:8.8.8.8',
    '::ffff:169.254.169.254',
    '::127.0.0.1',
    '64:ff9b::a9fe:a9fe',
  ]) {
    t.notOk(isPublicAddress(ip), `${ip} is not public`);
  }
  t.notOk(isPublicAddress('example.com'), 'a name is not an address');
});

t.test('webhook URLs without WEBHOOKS_ALLOW_PRIVATE_URLS', async (t) => {
  const ok = [
    'https://example.com/hook',
    'https://hooks.example.com:8443/a/b?c=d',
    'https://8.8.8.8/x',
    'https://[2606:4700:4700::1111]/x',
  ];
  for (const u of ok) t.equal(webhookUrlProblem(u, false), null, u);
  const refused: [string, string][] = [
    ['http://example.com/hook', 'must use https://'],
    ['ftp://example.com/', 'must use https://'],
    ['example.com/hook', 'must be an absolute URL'],
    ['https://', 'must be an absolute URL'],
    [' https://example.com', 'must not have leading or trailing spaces'],
    ['https://user:pw@example.com/', 'must not contain a user name or password'],
    ['https://127.0.0.1/', 'must not point to a private, loopback, link-local or reserved address'],
    ['https://10.1.2.3/', 'must not point to a private, loopback, link-local or reserved address'],
    [
      'https://169.254.169.254/latest/meta-data',
      'must not point to a private, loopback, link-local or reserved address',
    ],
    ['https://[::1]/', 'must not point to a private, loopback, link-local or reserved address'],
    ['https://[fe80::1]/', 'must not point to a private, loopback, link-local or reserved address'],
    ['https://[::ffff:127.0.0.1]/', 'must not point to a private, loopback, link-local or reserved address'],
    ['https://2130706433/', 'must not point to a private, loopback, link-local or reserved address'],
    ['https://0x7f.1/', 'must not point to a private, loopback, link-local or reserved address'],
    ['https://localhost/', 'must not point to localhost'],
    ['https://LOCALHOST./', 'must not point to localhost'],
    ['https://api.localhost:8443/', 'must not point to localhost'],
    ['https://example.com/' + 'a'.repeat(2048), 'must be at most 2048 characters'],
  ];
  for (const [u, why] of refused) t.equal(webhookUrlProblem(u, false), why, u.slice(0, 60));
});

t.test('WEBHOOKS_ALLOW_PRIVATE_URLS permits http and private targets, nothing else', async (t) => {
  t.equal(webhookUrlProblem('http://127.0.0.1:9000/hook', true), null);
  t.equal(webhookUrlProblem('https://localhost/hook', true), null);
  t.equal(webhookUrlProblem('ftp://127.0.0.1/', true), 'must use https:// or http://');
  t.equal(webhookUrlProblem('not a url', true), 'must be an absolute URL');
});
