import t from 'tap';
import { parseConfig } from '../../shared/config.js';
import { isSsoDomain } from '../../shared/config-sso.js';
import { identityOfClaims, roleOfClaim } from '../../services/domain/sso/identity.js';
import { safeReturnTo, SsoTransactions } from '../../services/control/sso/transaction.js';

const base = {
  DATABASE_URL: 'postgres://u@127.0.0.1:55432/db',
  NATS_URL: 'nats://127.0.0.1:54222',
  CLICKHOUSE_URL: 'http://127.0.0.1:58123',
  SECRET_KEY: 'ab'.repeat(32),
};
const sso = {
  ...base,
  SSO_ISSUER: 'https://idp.example.com/',
  SSO_CLIENT_ID: 'meterline',
  SSO_CLIENT_SECRET: 's3cret',
  SSO_ALLOWED_DOMAINS: 'Acme.com, acme.org',
  SSO_ROLE_MAP: 'billing-team=billing, admins=admin, *=developer',
};

t.test('SSO configuration: parsed, checked together, off by default', async (t) => {
  const off = parseConfig(base);
  t.equal(off.SSO_ISSUER, '');
  t.same(off.SSO_ROLE_MAP, { entries: [], defaultRole: 'support' });
  t.equal(off.SSO_PASSWORD_SIGNIN, true);
  t.notOk(isSsoDomain(off, 'x@acme.com'), 'no issuer: no SSO domain');

  const c = parseConfig(sso);
  t.equal(c.SSO_ISSUER, 'https://idp.example.com');
  t.same(c.SSO_ALLOWED_DOMAINS, ['acme.com', 'acme.org']);
  t.same(c.SSO_ROLE_MAP, {
    entries: [
      { value: 'billing-team', role: 'billing' },
      { value: 'admins', role: 'admin' },
    ],
    defaultRole: 'developer',
  });
  t.equal(c.SSO_ROLE_CLAIM, 'groups');
  t.ok(isSsoDomain(c, 'Someone@ACME.com'));
  t.notOk(isSsoDomain(c, 'someone@acme.com.evil.test'));

  t.throws(() => parseConfig({ ...sso, SSO_ROLE_MAP: 'admins=root' }), /SSO_ROLE_MAP: "root" is not a role/);
  t.throws(() => parseConfig({ ...sso, SSO_ROLE_MAP: 'admins' }), /SSO_ROLE_MAP: must be claim=role pairs/);
  t.throws(() => parseConfig({ ...sso, SSO_ALLOWED_DOMAINS: 'acme' }), /SSO_ALLOWED_DOMAINS: must list domains/);
  t.throws(() => parseConfig({ ...sso, SSO_ISSUER: 'ftp://idp' }), /SSO_ISSUER: must use/);
  const missing = (() => {
    try {
      parseConfig({ ...base, SSO_ISSUER: 'https://idp.example.com' });
    } catch (err) {
      return (err as Error).message;
    }
  })();
  t.match(missing, /SSO_CLIENT_ID: is required when SSO_ISSUER is set/);
  t.match(missing, /SSO_CLIENT_SECRET: is required when SSO_ISSUER is set/);
  t.match(missing, /SSO_ALLOWED_DOMAINS: must name at least one domain/);
});

t.test('identity of the id_token: verified email of an allowed domain, role from the claim', async (t) => {
  const rules = {
    allowedDomains: ['acme.com'],
    roleClaim: 'groups',
    roleMap: {
      entries: [
        { value: 'admins', role: 'admin' as const },
        { value: 'fin', role: 'billing' as const },
      ],
      defaultRole: 'support' as const,
    },
  };
  t.same(
    identityOfClaims({ sub: 's1', email: 'a@acme.com', email_verified: true, groups: ['fin', 'admins'] }, rules),
    {
      email: 'a@acme.com',
      subject: 's1',
      role: 'admin',
    },
    'the first map entry the claim carries wins',
  );
  t.same(identityOfClaims({ sub: 's', email: 'a@acme.com', email_verified: 'true' }, rules), {
    refusal: 'email_unverified',
  });
  t.same(identityOfClaims({ sub: 's', email: 'a@acme.com' }, rules), { refusal: 'email_unverified' });
  t.same(identityOfClaims({ sub: 's', email_verified: true }, rules), { refusal: 'email_missing' });
  t.same(identityOfClaims({ sub: 's', email: 'a@sub.acme.com', email_verified: true }, rules), {
    refusal: 'domain_not_allowed',
  });
  t.equal(roleOfClaim(rules.roleMap, 'fin'), 'billing', 'a string claim');
  t.equal(roleOfClaim(rules.roleMap, undefined), 'support');
  t.equal(roleOfClaim(rules.roleMap, [42, 'other']), 'support');
});

t.test('transactions: sealed, expiring; return_to stays on this server', async (t) => {
  const tx = new SsoTransactions(Buffer.alloc(32, 7), false);
  const { transaction, setCookie } = tx.begin('/console', 1_000_000);
  t.match(setCookie, /^meterline_sso=[^;]+; Path=\/console\/sso; HttpOnly; SameSite=Lax; Max-Age=600$/);
  const cookie = setCookie.split(';')[0];
  t.same(tx.read(cookie, 1_000_000), transaction);
  t.equal(tx.read(cookie, 1_000_000 + 601_000), null, 'expired after 10 minutes');
  t.equal(tx.read(`${cookie.slice(0, -2)}AA`, 1_000_000), null, 'tampered');
  t.equal(new SsoTransactions(Buffer.alloc(32, 8), false).read(cookie, 1_000_000), null, 'another key');
  t.equal(safeReturnTo('/oauth/authorize?client_id=x'), '/oauth/authorize?client_id=x');
  t.equal(safeReturnTo('/console?x=1'), '/console?x=1');
  for (const bad of ['https://evil.test/', '//evil.test/oauth/authorize?', '/\\evil.test', '/v1/users', null])
    t.equal(safeReturnTo(bad), '/console', String(bad));
});
