import t from 'tap';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoPath } from '../../shared/paths.js';
import { ROLES } from '../../services/role-names.js';
import { haproxyConfig } from '../../infra/stack/haproxy.js';
import { parseInventory } from '../../infra/stack/inventory.js';
import { TOOLS, toolPath } from '../../infra/stack/tools.js';

// The files an operator copies onto the hosts (docs/hosts.md): the systemd units pass
// `systemd-analyze verify` without a warning, the example inventory is valid, and the HAProxy configuration
// generated from it passes `haproxy -c`.

const SYSTEMD = repoPath('infra/systemd');
const EXAMPLE = repoPath('infra/hosts/inventory.example.json');

function verify(bin: string, units: string[]): { status: number | null; out: string } {
  const r = spawnSync(bin, ['verify', ...units], { encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}`.trim() };
}

t.test('systemd units: systemd-analyze verify, one instance per role', async (t) => {
  const bin = await toolPath(TOOLS.systemdAnalyze);
  const dir = mkdtempSync(path.join(tmpdir(), 'meterline-units-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const files = readdirSync(SYSTEMD).filter((f) => f.endsWith('.service'));
  t.same(files.sort(), ['meterline-servers.service', 'meterline@.service']);
  for (const f of files) copyFileSync(path.join(SYSTEMD, f), path.join(dir, f));
  // A template is verified through its instances: the unit each role runs as.
  const units = [
    ...ROLES.map((r) => path.join(dir, `meterline@${r}.service`)),
    path.join(dir, 'meterline-servers.service'),
  ];
  const r = verify(bin, units);
  t.equal(r.status, 0, 'systemd-analyze verify passes');
  t.equal(r.out, '', `and says nothing (no warning): ${r.out}`);
  const unit = readFileSync(path.join(SYSTEMD, 'meterline@.service'), 'utf8');
  t.match(unit, /^ExecStart=.* up --role %i$/m, 'each instance runs `meterline up --role <instance>`');
  t.match(unit, /^KillMode=mixed$/m, 'SIGTERM reaches the supervisor, which drains the role');

  // The check bites: a misspelt setting is reported.
  writeFileSync(path.join(dir, 'broken@.service'), unit.replace('RestartSec=2', 'RestartSecs=2'));
  const broken = verify(bin, [path.join(dir, 'broken@api.service')]);
  t.match(broken.out, /Unknown key name 'RestartSecs'|Unknown key 'RestartSecs'/, 'a unit with a typo is reported');
});

t.test('the example inventory and its HAProxy configuration', async (t) => {
  const inv = parseInventory(JSON.parse(readFileSync(EXAMPLE, 'utf8')), EXAMPLE);
  t.same(
    inv.hosts.map((h) => [h.name, h.servers.length, h.roles.length]),
    [
      ['meterline-1', 4, 4],
      ['meterline-2', 3, 4],
      ['meterline-3', 3, 4],
    ],
  );
  const doc = readFileSync(repoPath('docs/hosts.md'), 'utf8');
  t.ok(doc.includes(readFileSync(EXAMPLE, 'utf8').trim()), 'docs/hosts.md shows the example inventory as it is');
  t.ok(doc.includes(readFileSync(repoPath('infra/hosts/host.env.example'), 'utf8').trim()), 'and the host.env example');
  const bin = await toolPath(TOOLS.haproxy);
  const dir = mkdtempSync(path.join(tmpdir(), 'meterline-haproxy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const cfg = path.join(dir, 'haproxy.cfg');
  const credential = { user: 'meterline', password: 'generated-0123456789' };
  writeFileSync(
    cfg,
    haproxyConfig(inv, { bind: { host: '127.0.0.1', port: 8443 }, stats: { port: 8404, credential } }),
  );
  const r = spawnSync(bin, ['-c', '-f', cfg], { encoding: 'utf8' });
  t.equal(r.status, 0, `haproxy -c accepts it: ${r.stdout}${r.stderr}`);
  const text = readFileSync(cfg, 'utf8');
  t.match(text, /server meterline-3 10\.0\.0\.13:8080 check/);
  // Issue 49: the apis see clients, not the load balancer; the stats page is not open to anyone.
  t.match(text, /^ {4}option forwardfor$/m, 'the client address is sent in X-Forwarded-For');
  t.match(text, /^ {4}bind 127\.0\.0\.1:8404$/m, 'the stats page listens on loopback by default');
  t.match(text, /^ {4}user meterline insecure-password generated-0123456789$/m);
  t.match(
    text,
    /^ {4}http-request auth realm meterline-stats unless \{ http_auth\(stats_users\) \}$/m,
    'and asks for it',
  );
  t.ok(
    text.indexOf('http-request auth') < text.indexOf('prometheus-exporter'),
    'before the exporter answers (/metrics too)',
  );
  t.ok(inv.settings.TRUSTED_PROXIES, 'the example inventory names its load balancer as a trusted proxy');

  t.throws(
    () =>
      parseInventory(
        {
          hosts: [
            { name: 'a', address: '10.0.0.1', servers: ['postgres'], roles: ['api', 'worker'] },
            { name: 'b', address: '10.0.0.1', servers: ['postgres', 'nats'], roles: [] },
          ],
        },
        'bad.json',
      ),
    /"worker" is not one of[\s\S]*address 10\.0\.0\.1 used twice[\s\S]*at most one host may run postgres[\s\S]*at least one host must run clickhouse/,
    'a bad inventory names every problem',
  );
});
