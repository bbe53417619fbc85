import t from 'tap';
import {
  formatScopes,
  grantableScopes,
  hasScope,
  parseScopeParam,
  requireScope,
  scopesCover,
  type Principal,
} from '../../shared/auth/types.js';
import { InsufficientScopeError } from '../../shared/errors.js';

t.test('scopes nest: admin ⊇ write ⊇ read', async (t) => {
  t.ok(scopesCover(['admin'], 'read'));
  t.ok(scopesCover(['admin'], 'write'));
  t.ok(scopesCover(['write'], 'read'));
  t.notOk(scopesCover(['write'], 'admin'));
  t.notOk(scopesCover(['read'], 'write'));
  t.notOk(scopesCover([], 'read'));
  t.ok(scopesCover(['read', 'write'], 'write'));
});

t.test('requireScope: 403 insufficient_scope naming the needed scope, with a Bearer challenge', async (t) => {
  const p: Principal = { accountId: 'a', userId: 'u', clientId: 'c', scopes: ['read'], tokenId: 'j', expiresAt: 0 };
  t.ok(hasScope(p, 'read'));
  t.doesNotThrow(() => requireScope(p, 'read'));
  const err = (() => {
    try {
      requireScope(p, 'write');
    } catch (e) {
      return e as InsufficientScopeError;
    }
  })();
  t.ok(err instanceof InsufficientScopeError);
  t.equal(err!.status, 403);
  t.equal(err!.code, 'insufficient_scope');
  t.equal(err!.headers['WWW-Authenticate'], 'Bearer realm="meterline", error="insufficient_scope", scope="write"');
});

t.test('parseScopeParam (RFC 6749 §3.3)', async (t) => {
  t.same(parseScopeParam('write read'), { scopes: ['read', 'write'] }, 'canonical order');
  t.same(parseScopeParam('read  read '), { scopes: ['read'] }, 'duplicates and extra spaces');
  t.same(parseScopeParam(''), { scopes: [] });
  t.same(parseScopeParam('read Admin'), { unknown: 'Admin' }, 'case-sensitive');
  t.same(parseScopeParam('openid'), { unknown: 'openid' });
  t.equal(formatScopes(['admin', 'read']), 'read admin');
});

t.test('grantableScopes: only operators grant admin', async (t) => {
  t.same(grantableScopes(['read', 'write', 'admin'], true), { granted: ['read', 'write', 'admin'], withheld: [] });
  t.same(grantableScopes(['read', 'write', 'admin'], false), { granted: ['read', 'write'], withheld: ['admin'] });
  t.same(grantableScopes(['admin'], false), { granted: ['write'], withheld: ['admin'] }, 'admin alone → write');
  t.same(grantableScopes(['read'], false), { granted: ['read'], withheld: [] });
});
