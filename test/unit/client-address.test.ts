import t from 'tap';
import { clientAddressOf, NO_TRUSTED_PROXIES, parseTrustedProxies } from '../../shared/http/client-address.js';
import { parseConfig } from '../../shared/config.js';

const proxies = parseTrustedProxies('10.0.0.5, 10.1.0.0/16,fd00::/8');

t.test('an untrusted peer is the client, whatever X-Forwarded-For says', async (t) => {
  t.equal(clientAddressOf('203.0.113.9', '198.51.100.1', proxies), '203.0.113.9');
  t.equal(clientAddressOf('203.0.113.9', undefined, proxies), '203.0.113.9');
  t.equal(clientAddressOf('10.0.0.5', '198.51.100.1', NO_TRUSTED_PROXIES), '10.0.0.5', 'no proxy configured');
});

t.test('a trusted peer: the right-most entry that is not a trusted proxy', async (t) => {
  t.equal(clientAddressOf('10.0.0.5', '198.51.100.1', proxies), '198.51.100.1', 'the address HAProxy appended');
  t.equal(
    clientAddressOf('10.0.0.5', '1.2.3.4, 198.51.100.1', proxies),
    '198.51.100.1',
    'what the client wrote left of it is ignored',
  );
  t.equal(
    clientAddressOf('10.0.0.5', '1.2.3.4, 198.51.100.1, 10.1.2.3', proxies),
    '198.51.100.1',
    'a chain of trusted proxies is walked from the right',
  );
  t.equal(clientAddressOf('10.0.0.5', 'garbage, 198.51.100.1', proxies), '198.51.100.1');
  t.equal(
    clientAddressOf('10.0.0.5', '198.51.100.1, not-an-ip', proxies),
    '10.0.0.5',
    'an entry that is no address stops the walk at the hop right of it',
  );
  t.equal(clientAddressOf('10.0.0.5', '10.1.0.7', proxies), '10.1.0.7', 'only proxies: the left-most');
  t.equal(clientAddressOf('10.0.0.5', '', proxies), '10.0.0.5', 'an empty header: the peer');
  t.equal(clientAddressOf('::ffff:10.0.0.5', '198.51.100.1', proxies), '198.51.100.1', 'IPv4-mapped peer');
  t.equal(clientAddressOf('fd00::1', '2001:db8::7', proxies), '2001:db8::7', 'IPv6');
  t.equal(clientAddressOf('10.0.0.6', '198.51.100.1', proxies), '10.0.0.6', 'outside the list: not trusted');
});

t.test('TRUSTED_PROXIES: addresses and CIDR blocks, a bad entry named', async (t) => {
  t.ok(proxies.has('10.1.255.255'));
  t.notOk(proxies.has('10.2.0.0'));
  t.ok(proxies.has('fdff::1'));
  t.throws(() => parseTrustedProxies('10.0.0.5,proxy.local'), /proxy\.local/);
  t.throws(() => parseTrustedProxies('10.0.0.0/33'), /prefix length/);
  t.throws(() => parseTrustedProxies('::/129'), /prefix length/);
  const base = {
    DATABASE_URL: 'postgres://x/y',
    NATS_URL: 'nats://x',
    CLICKHOUSE_URL: 'http://x',
    SECRET_KEY: 'a'.repeat(64),
  };
  t.equal(parseConfig(base).TRUSTED_PROXIES.has('127.0.0.1'), false, 'default: none');
  t.equal(parseConfig({ ...base, TRUSTED_PROXIES: '127.0.0.1' }).TRUSTED_PROXIES.has('127.0.0.1'), true);
  t.throws(() => parseConfig({ ...base, TRUSTED_PROXIES: '127.0.0.1/40' }), /TRUSTED_PROXIES/);
});
